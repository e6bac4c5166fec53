// The package log's state for the options page, read in the background from
// the extension's store: the witness policy in use and the head this browser
// last accepted for the connected provider, with the witnesses that cosigned
// it (client/core/package-log.ts records it at every check).
import { logFingerprint } from '../../protocol/package-log.js';
import type { PackageLogStatus } from './messages.js';
import type { PrivateStore } from './store.js';

export async function packageLogStatus(store: PrivateStore): Promise<PackageLogStatus> {
  const provider = await store.provider();
  const { policy, isDefault } = await store.witnessPolicyInUse();
  const origin = provider && new URL(provider.url).origin;
  const t = origin ? await store.logTrust(origin) : undefined;
  // A head recorded by the hash-chain log (format 1) is shown once the new log has been checked.
  const head =
    t && 'logKey' in t
      ? {
          size: t.size,
          fingerprint: logFingerprint(t.size, t.root),
          logKey: t.logKey,
          keySource: t.keySource,
          checkedAt: t.checkedAt,
          cosigners: t.cosigners,
        }
      : undefined;
  return { provider: origin, policy, defaultPolicy: isDefault, ...(head ? { head } : {}) };
}
