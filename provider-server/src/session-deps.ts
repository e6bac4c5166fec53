// What a session (session.ts) is given: the store, the crypto workers, the
// served models and blocklists, its limits, the log and metrics.
import type { BlocklistCatalog } from './blocklist.js';
import type { ProviderCrypto, ServedModel } from './crypto.js';
import type { ServerLimits } from './limits.js';
import type { Log } from './log.js';
import type { Metrics } from './metrics.js';
import type { Store } from './store.js';

export interface SessionDeps {
  store: Store;
  crypto: ProviderCrypto;
  metrics: Metrics;
  /** The current version of a model id, if served. */
  currentModel(id: string): ServedModel | undefined;
  /** Published private blocklists (docs/blocklist.md), if any. */
  blocklists?: BlocklistCatalog;
  limits: Pick<
    ServerLimits,
    | 'maxFrameBytes'
    | 'requestsPerMinute'
    | 'hellosPerMinute'
    | 'pingsPerMinute'
    | 'userKeyBudget'
    | 'unacknowledgedAnswersPerUser'
    | 'blocklistEvaluationsPerDay'
    | 'messagesPerDay'
    | 'backlogAllowance'
    | 'tokenLifetimeMs'
  >;
  log: Log;
  /** Called once, when hello succeeds. */
  onReady?(): void;
}
