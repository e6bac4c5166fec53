// Thunderbird: the messages of each folder that nothing has looked at yet.
// Events tell only a running add-on about new mail: mail that arrived while
// Thunderbird was closed (or the add-on locked, or the provider down) is
// found here, by date. Each folder keeps a mark (every message dated from
// SLACK_MS before it on was looked at) and the keys of the messages looked
// at since. A scan lists the folder's messages dated from the mark
// (messages.query fromDate), at most MAX_PER_SCAN of the newest, minus those
// looked at; the caller says which ones it looked at, and once none is left
// the mark moves to the time the scan started. A scan cut short (Thunderbird
// closed, the key locked, the provider down) is therefore taken up by the
// next one, which looks again only at what was not looked at.
//
// The mark trails by SLACK_MS because a Date header is the sender's clock
// and mail can take hours to arrive. A sender who backdates a message by
// more than that, or copies another message's Message-ID, Date and size in
// the same folder, is not found here: such a message is still checked when
// it arrives while Thunderbird runs, or when it is shown.
import { allMessages, type MailFolder, type MessageHeader, type ThunderbirdApi } from './api.js';

/** The subset of browser.storage.local the scans (and the ids of mail that waits for an unlock) are kept in. */
export interface PendingArea {
  get(key: string): Promise<Record<string, unknown>>;
  set(items: Record<string, unknown>): Promise<void>;
}

/** Folders mail is not delivered to: never scanned. */
const SKIPPED = new Set(['junk', 'trash', 'sent', 'drafts', 'templates', 'outbox', 'archives']);
const DAY_MS = 86_400_000;
export const SLACK_MS = 3 * DAY_MS;
export const MAX_PER_SCAN = 500;
/** Keys kept per folder, at most (the oldest go first): bounds storage for a folder whose mark cannot move. */
export const MAX_SEEN = 10_000;

interface FolderState {
  mark: number;
  /** Key of a message looked at → its date (to forget it once the mark has passed it). */
  seen: Record<string, number>;
}

export interface ScanOptions {
  /** Where a folder scanned for the first time starts: this long (and the slack) before now. */
  firstLookbackMs: number;
  now?: () => number;
}

/** What one scan found: the messages, oldest first, and which folders it covered whole. */
export interface Scan {
  headers: MessageHeader[];
  startedAt: number;
  /** The folders scanned (MailFolderIds). */
  folders: string[];
  /** Folders with more than MAX_PER_SCAN candidates: their mark cannot move after this scan. */
  capped: Set<string>;
}

const dateOf = (h: MessageHeader) => new Date(h.date).getTime() || 0;
/** Stable across restarts (Thunderbird's message ids are not). */
const keyOf = (h: MessageHeader) => `${h.headerMessageId}\n${h.size ?? ''}\n${dateOf(h)}`;

export class FolderScan {
  private state: Promise<Record<string, FolderState>> | undefined;
  private saving: ReturnType<typeof setTimeout> | undefined;
  private readonly now: () => number;

  /** `name`: what the scan is for ("spam", "index"); each keeps its own marks. */
  constructor(
    private readonly api: ThunderbirdApi,
    private readonly area: PendingArea,
    private readonly name: string,
    private readonly opts: ScanOptions,
  ) {
    this.now = opts.now ?? Date.now;
  }

  private get storageKey(): string {
    return `pmf-tb-scan-${this.name}`;
  }

  private load(): Promise<Record<string, FolderState>> {
    return (this.state ??= this.area
      .get(this.storageKey)
      .then((r) => (r[this.storageKey] as Record<string, FolderState> | undefined) ?? {}));
  }

  /** Written a moment later, so that a burst of looks is one write. */
  private save(): void {
    clearTimeout(this.saving);
    this.saving = setTimeout(() => void this.flush(), 500);
  }

  async flush(): Promise<void> {
    clearTimeout(this.saving);
    await this.area.set({ [this.storageKey]: await this.load() });
  }

  /** Every folder mail arrives in (of every account), or only `folder`. */
  private async folders(only?: MailFolder): Promise<MailFolder[]> {
    const all = only ? [only] : await this.api.folders.query({});
    return all.filter((f) => !f.specialUse?.some((u) => SKIPPED.has(u)));
  }

  /** The messages not looked at since each folder's mark, oldest first. */
  async start(only?: MailFolder): Promise<Scan> {
    const startedAt = this.now();
    const state = await this.load();
    const headers: MessageHeader[] = [];
    const capped = new Set<string>();
    const folders = await this.folders(only);
    for (const folder of folders) {
      const s = (state[folder.id] ??= { mark: startedAt - this.opts.firstLookbackMs, seen: {} });
      const listed = await allMessages(
        this.api,
        await this.api.messages.query({ folderId: folder.id, fromDate: new Date(s.mark - SLACK_MS) }),
      );
      const fresh = listed.filter((h) => !(keyOf(h) in s.seen)).sort((a, b) => dateOf(b) - dateOf(a));
      if (fresh.length > MAX_PER_SCAN) capped.add(folder.id);
      headers.push(...fresh.slice(0, MAX_PER_SCAN).map((h) => ({ ...h, folder: h.folder ?? folder })));
    }
    this.save();
    return {
      headers: headers.sort((a, b) => dateOf(a) - dateOf(b)),
      startedAt,
      folders: folders.map((f) => f.id),
      capped,
    };
  }

  /** `h` was looked at (checked, or not the scan's business): no scan lists it again. */
  async lookedAt(h: MessageHeader): Promise<void> {
    const folderId = h.folder?.id;
    if (!folderId) return;
    const state = await this.load();
    const s = (state[folderId] ??= { mark: this.now() - this.opts.firstLookbackMs, seen: {} });
    s.seen[keyOf(h)] = dateOf(h);
    const keys = Object.keys(s.seen);
    if (keys.length > MAX_SEEN)
      for (const k of keys.sort((a, b) => s.seen[a] - s.seen[b]).slice(0, keys.length - MAX_SEEN)) delete s.seen[k];
    this.save();
  }

  /**
   * The scan is over: a folder whose listed messages were all looked at
   * moves its mark to the scan's start, and forgets the keys the mark passed.
   */
  async finish(scan: Scan): Promise<void> {
    const state = await this.load();
    const open = new Set(
      scan.headers.filter((h) => !(keyOf(h) in (state[h.folder!.id]?.seen ?? {}))).map((h) => h.folder!.id),
    );
    for (const folderId of scan.folders) {
      const s = state[folderId];
      if (!s || open.has(folderId) || scan.capped.has(folderId) || s.mark >= scan.startedAt) continue;
      s.mark = scan.startedAt;
      for (const [k, date] of Object.entries(s.seen)) if (date < s.mark - SLACK_MS) delete s.seen[k];
    }
    await this.flush();
  }
}

/**
 * Calls `scan(folder)` when a folder's message count grows: Thunderbird
 * fetched mail into it (after a start, the mail that came while it was
 * closed). The first count a background sees counts as growth.
 */
export function onFolderGrowth(api: ThunderbirdApi, scan: (folder: MailFolder) => void): void {
  const counts = new Map<string, number>();
  api.folders.onFolderInfoChanged.addListener((folder, info) => {
    const total = info.totalMessageCount;
    if (total === undefined) return;
    const grew = total > (counts.get(folder.id) ?? -1);
    counts.set(folder.id, total);
    if (grew) scan(folder);
  });
}
