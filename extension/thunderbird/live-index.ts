// Thunderbird: keeps the search index in step with the mail as it changes,
// without the user clicking anything. Registered at the top level of the
// background so the events wake the MV3 event page.
import { allMessages, type MessageList, type ThunderbirdApi } from './api.js';
import { indexThunderbirdMail, sourceId, type Deps } from './displayed-message.js';

export function watchMail(api: ThunderbirdApi, deps: Deps, remove: (id: string) => Promise<unknown>): void {
  // One batch at a time: a burst of new mail must not decrypt in parallel.
  let queue: Promise<unknown> = Promise.resolve();
  const later = (job: () => Promise<unknown>) => {
    queue = queue.then(job).catch((e: unknown) => console.warn('indexing new mail:', (e as Error).name));
  };
  const index = (list: MessageList) =>
    later(async () => indexThunderbirdMail(deps, () => {}, await allMessages(api, list)));

  api.messages.onNewMailReceived.addListener((_folder, list) => index(list));
  // The index is keyed by Message-ID, so a move changes nothing for mail
  // already indexed; it catches mail from folders that onNewMailReceived
  // does not watch (Junk back to the Inbox), an upsert for the rest.
  api.messages.onMoved.addListener((_from, to) => index(to));
  api.messages.onDeleted.addListener((list) =>
    later(async () => {
      for (const header of await allMessages(api, list)) await remove(sourceId(header));
    }),
  );
}
