// The remote search index in provider-server (docs/remote-search.md): its HTTP
// handler on the store, with the configuration's per-account limits.
import type { Log } from '../log.js';
import type { Store } from '../store.js';
import { createRemoteIndexHandler } from './http.js';
import { remoteIndexLimits } from './limits.js';
import { RemoteIndexStore } from './store.js';

export function remoteIndexHandler(store: Store, configured: unknown, log: Pick<Log, 'failed'>) {
  const limits = remoteIndexLimits(configured ?? {});
  return createRemoteIndexHandler({ store, index: new RemoteIndexStore(() => store.sql(), limits, log), limits, log });
}
