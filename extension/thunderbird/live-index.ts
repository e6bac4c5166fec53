// Thunderbird: keeps the search index in step with the mail as it changes,
// without the user clicking anything. Registered at the top level of the
// background so the events wake the MV3 event page. Mail no event announced
// (it arrived while Thunderbird was closed) is found by a scan of each
// folder (folder-scan.ts) when the background starts with the index open,
// after an unlock, and when a folder's message count grows.
import { allMessages, type MailFolder, type MessageHeader, type MessageList, type ThunderbirdApi } from './api.js';
import { indexThunderbirdMail, sourceId, type Deps } from './displayed-message.js';
import { FolderScan, onFolderGrowth, type PendingArea } from './folder-scan.js';

/** The search index as seen from here: open only while a key is unlocked. */
export interface IndexTarget {
  isOpen(): Promise<boolean>;
  has(id: string): Promise<boolean>;
  remove(id: string): Promise<unknown>;
}
const PENDING = 'pmf-tb-pending';

/** Returns catchUp(), to call after an unlock or at the start: indexes the mail not indexed yet. */
export function watchMail(api: ThunderbirdApi, deps: Deps, target: IndexTarget, area: PendingArea): () => void {
  // One batch at a time: a burst of new mail must not decrypt in parallel.
  let queue: Promise<unknown> = Promise.resolve();
  const later = (job: () => Promise<unknown>) => {
    queue = queue.then(job).catch((e: unknown) => console.warn('indexing new mail:', (e as Error).name));
  };
  const pending = async () => ((await area.get(PENDING))[PENDING] as number[] | undefined) ?? [];
  const indexNow = async (headers: MessageHeader[]) => {
    if (await target.isOpen()) return void (await indexThunderbirdMail(deps, () => {}, headers));
    // Locked: the index cannot take it. Keep the message ids (never content) for the next unlock.
    await area.set({ [PENDING]: [...new Set([...(await pending()), ...headers.map((h) => h.id)])] });
  };
  const index = (list: MessageList) => later(async () => indexNow(await allMessages(api, list)));

  api.messages.onNewMailReceived.addListener((_folder, list) => index(list));
  // The index is keyed by Message-ID, so a move changes nothing for mail
  // already indexed; it catches mail from folders that onNewMailReceived
  // does not watch (Junk back to the Inbox), an upsert for the rest.
  api.messages.onMoved.addListener((_from, to) => index(to));
  api.messages.onDeleted.addListener((list) =>
    later(async () => {
      for (const header of await allMessages(api, list)) await target.remove(sourceId(header));
    }),
  );
  // From now on: a first scan covers only the last days (Index all mail is there for the rest).
  const folders = new FolderScan(api, area, 'index', { firstLookbackMs: 0 });
  const scan = (only?: MailFolder) =>
    later(async () => {
      if (!(await target.isOpen())) return;
      const found = await folders.start(only);
      await indexThunderbirdMail(deps, () => {}, found.headers, {
        paused: () => false,
        isIndexed: (id) => target.has(id),
        // One that waits for a locked key is the next scan's.
        onDone: (h, locked) => void (!locked && folders.lookedAt(h)),
      });
      await folders.finish(found);
    });
  onFolderGrowth(api, scan);
  return () => {
    later(async () => {
      const ids = await pending();
      if (ids.length === 0 || !(await target.isOpen())) return;
      await area.set({ [PENDING]: [] });
      // A message moved or deleted since has another id or none: skip it (onMoved saw the move).
      const headers = await Promise.all(ids.map((id) => api.messages.get(id).catch(() => undefined)));
      await indexNow(headers.filter((h): h is MessageHeader => h !== undefined));
    });
    scan();
  };
}
