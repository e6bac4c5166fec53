// Topic requests a stopped run kept (the worker closed after the request
// left, before its answer was decoded) belong to messages whose spam verdict
// is stored, so no batch of new mail names them again: the worker shares
// them with whatever batch comes next. This resumes them when the background
// starts instead, with an empty batch, which shares only those.
import { accountOf, type ProviderConfig } from './account.js';
import { type PrivateStore } from './store.js';
import type { ClassifyItem } from './worker-protocol.js';

/** Sends the worker an empty batch when topic requests are kept; false when there was nothing to resume. */
export async function resumeKeptTopics(
  store: PrivateStore,
  classify: (provider: ProviderConfig, items: ClassifyItem[]) => Promise<unknown>,
): Promise<boolean> {
  const provider = await store.provider();
  const { spamCheck, topics } = await store.settings();
  if (!provider || !spamCheck || !topics) return false;
  if ((await store.keptTopicIds(accountOf(provider))).length === 0) return false;
  await classify(provider, []);
  return true;
}
