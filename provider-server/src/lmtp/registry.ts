// The store as the LMTP stage's registry: a stamped message is registered
// for its recipient once (a retry under the same id finds it there). Dovecot
// holds the mail, so only its id and size are kept, unless the demo webmail
// shows it (lmtp.keepBodies).
import type { Store } from '../store.js';
import type { Registry } from './stage.js';

export function storeRegistry(store: Store, { keepBodies = false } = {}): Registry {
  return {
    async register(user, id, raw) {
      const userId = await store.userId(user);
      if (userId === undefined) return; // not a user of the private functions: relayed all the same
      await store.deliver(userId, id, raw, { keepBody: keepBodies, once: true });
    },
  };
}
