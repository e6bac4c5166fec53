// The store as the LMTP stage's registry: a stamped message is registered
// for its recipient once (a retry under the same id finds it there).
import type { Store } from '../store.js';
import type { Registry } from './stage.js';

export function storeRegistry(store: Store): Registry {
  return {
    async register(user, id, raw) {
      const userId = await store.userId(user);
      if (userId === undefined) return; // not a user of the private functions: relayed all the same
      if (!(await store.getMessage(userId, id))) await store.deliver(userId, id, raw);
    },
  };
}
