// Thunderbird: keeps the search index in step with the mail as it changes,
// without the user clicking anything. Registered at the top level of the
// background so the events wake the MV3 event page. Mail no event announced
// (it arrived while Thunderbird was closed) is found by a scan of each
// folder (folder-scan.ts) when the background starts with the index open,
// after an unlock, and when a folder's message count grows.
import { newestIds } from '../lib/newest-ids.js';
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
/**
 * The ids of mail deleted while the index was locked, for the next unlock.
 * Thunderbird's profile holds every Message-ID in the clear already; the
 * list keeps the newest that fit in this many characters (a deletion past
 * it stays in the index, as every locked deletion did before).
 */
const DELETED = 'pmf-tb-deleted';
const DELETED_MAX_CHARS = 4 << 20;

/** Returns catchUp(), to call after an unlock or at the start: indexes the mail not indexed yet. */
export function watchMail(api: ThunderbirdApi, deps: Deps, target: IndexTarget, area: PendingArea): () => void {
  // One batch at a time: a burst of new mail must not decrypt in parallel.
  let queue: Promise<unknown> = Promise.resolve();
  const later = (job: () => Promise<unknown>) => {
    queue = queue.then(job).catch((e: unknown) => console.warn('indexing new mail:', (e as Error).name));
  };
  /** A list kept in the area for the next unlock (empty when none). */
  const kept = async <T>(key: string): Promise<T[]> => ((await area.get(key))[key] as T[] | undefined) ?? [];
  const pending = () => kept<number>(PENDING);
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
  const deleted = () => kept<string>(DELETED);
  const removeNow = async (ids: string[]) => {
    if (await target.isOpen()) {
      for (const id of ids) await target.remove(id);
      return;
    }
    // Locked: the index cannot name them now; they leave it at the next unlock.
    await area.set({ [DELETED]: newestIds([...(await deleted()), ...ids], DELETED_MAX_CHARS) });
  };
  api.messages.onDeleted.addListener((list) =>
    later(async () => removeNow((await allMessages(api, list)).map(sourceId))),
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
    // Deletions first: a message deleted and delivered again while locked is indexed again after.
    later(async () => {
      const ids = await deleted();
      if (ids.length === 0 || !(await target.isOpen())) return;
      await area.set({ [DELETED]: [] });
      await removeNow(ids); // locked again meanwhile: kept again
    });
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
