// Thunderbird: the private spam check of new and displayed mail. Only mail
// the provider delivered is asked about, under the id its LMTP stage wrote
// (X-PMF-Message-Id, outside the encryption): never the sender's Message-ID,
// and nothing for mail without it (another account's, Local Folders). The
// message is decrypted with the extension's keys or, failing that, taken
// from Thunderbird's own OpenPGP (messages.getFull; a "success" with nothing
// decrypted is a failure, and no check is spent on it), and classified by the
// same queue and worker as in Chromium (private/spam-queue.ts), which
// remember every outcome: a message is asked about at most once. A fresh
// spam verdict is acted on with applySpamVerdict (junk flag, and the move to
// the account's Junk folder unless the user chose local-only marking).
//
// The user has the last word: "Not Junk" on a message the add-on moved to
// Junk (messages.onUpdated) puts it back where it came from, and moving it
// out of Junk clears its junk flag; either way the correction is kept with
// its verdict (PrivateStore.markByUser, as the webmail's _Not spam_ does), so
// it is never moved to Junk again. A "Not Junk" message Thunderbird moved
// before the add-on could read it (an idle event page wakes up too late) is
// looked for again under its Message-ID (findMovedOut).
//
// Events reach only a running add-on, so mail is also looked for
// (scan(), thunderbird/folder-scan.ts): each folder's messages that nothing
// looked at since its mark are checked through the backlog's runner
// (private/backlog.ts: at most 8 in flight, progress for the status line).
// A scan runs when the background starts, when a folder's message count
// changes (Thunderbird fetching the mail that came while it was closed),
// after an unlock, after connecting and when the provider answers again;
// mail it could not check (locked, provider down) stays unlooked-at for the
// next one.
import { decryptedMessage } from '../../mail/decrypt.js';
import { providerIdOf } from '../../mail/message-id.js';
import { findPgpBlocks, type PgpBlock } from '../../mail/pgp.js';
import { BacklogRun, type BacklogProgress, type Skip } from '../private/backlog.js';
import { isOutcome } from '../private/faults.js';
import { SpamQueue, type FailureOf, type QueueDeps } from '../private/spam-queue.js';
import { accountOf } from '../private/account.js';
import { type PrivateStore } from '../private/store.js';
import { allMessages, type MailFolder, type MessageHeader, type ThunderbirdApi } from './api.js';
import { decryptedText } from './displayed-message.js';
import { FolderScan, onFolderGrowth, type PendingArea } from './folder-scan.js';
import { applySpamVerdict } from './junk.js';

export interface SpamCheckDeps {
  store(): Promise<PrivateStore>;
  classify: QueueDeps['classify'];
  /** The extension's own decryption: the decrypted data (a MIME entity or text), 'locked', or undefined (not for its keys). */
  decrypt(block: PgpBlock): Promise<string | 'locked' | undefined>;
  failureOf: FailureOf;
  onFailure?: QueueDeps['onFailure'];
  onOutcome?: QueueDeps['onOutcome'];
  refused?: QueueDeps['refused'];
  /** Where each folder's scan mark and the messages looked at are kept (storage.local; never content). */
  area: PendingArea;
  /** A scan's progress (undefined: none running), for the status line. */
  onProgress?(p: BacklogProgress | undefined): void;
  /**
   * How long after the user's "Not Junk" to look whether Thunderbird moved
   * the message itself (it does so for "Not Junk" in the Junk folder)
   * before putting it back; 2 s unless given.
   */
  putBackAfterMs?: number;
  /** The waits between looks for a message a "Not Junk" moved before the add-on could read it; RELOOK_MS unless given. */
  relookMs?: number[];
}

/** A message handed to the queue: its Thunderbird header, and the provider's account and id for it. */
interface Asked {
  account: string;
  messageId: string;
  header: MessageHeader;
}
/** Answered messages kept for a blocklist hit that follows the verdict (a batch is at most 500). */
const MAX_ANSWERED = 1000;
/** Queue entries need a target; Thunderbird's are messages, named by their Thunderbird id. */
const NO_TAB = { tabId: -1 };
/** A folder scanned for the first time (just connected) is checked this far back. */
export const FIRST_LOOKBACK_MS = 14 * 86_400_000;
/** About 30 s of looks in all: an IMAP move shows up in the destination once Thunderbird has synced it. */
const RELOOK_MS = [500, 1000, 2000, 4000, 8000, 15_000];
const junkFolder = (h: MessageHeader) => h.folder?.specialUse?.includes('junk') === true;

/** Registers the listeners; returns the queue (to drop waiting messages on lock or reconnect), check() and scan(). */
export function watchSpam(api: ThunderbirdApi, deps: SpamCheckDeps) {
  // One message read and decrypted at a time: a burst of new mail must not decrypt in parallel.
  let chain: Promise<unknown> = Promise.resolve();
  const later = (job: () => Promise<unknown>) => {
    chain = chain.then(job).catch((e: unknown) => console.warn('spam check:', (e as Error).name));
  };
  /** later(), and the job's result. */
  const inTurn = <T>(job: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => later(() => job().then(resolve, reject)));

  const folders = new FolderScan(api, deps.area, 'spam', { firstLookbackMs: FIRST_LOOKBACK_MS });
  /** Thunderbird ids read or waiting for an outcome (a message shown while it arrives is offered once), and under which id. */
  const busy = new Map<string, Asked>();
  /**
   * Answered lately: a blocklist hit comes after its verdict (docs/blocklist.md) and may make a ham
   * spam, so the message must still be known then. Bounded: the hit follows in the same batch.
   */
  const answered = new Map<string, Asked>();
  let run: BacklogRun<{ href: string; header: MessageHeader }> | undefined;
  const queue = new SpamQueue(
    {
      store: deps.store,
      classify: deps.classify,
      notify: (_target, sourceId, badge, fresh) => {
        if (badge.state === 'waiting') return void run?.waiting(sourceId, badge.paced ? 'paced' : 'unreachable');
        if (!isOutcome(badge)) return;
        // A blocklist hit after the verdict: the message was answered already.
        const followUp = !busy.has(sourceId) && answered.get(sourceId);
        const asked = followUp || busy.get(sourceId);
        if (!followUp) {
          busy.delete(sourceId);
          run?.settled(sourceId);
          if (asked) answered.set(sourceId, asked);
          if (answered.size > MAX_ANSWERED) answered.delete(answered.keys().next().value!);
          // An outcome is final; "unavailable" (locked meanwhile, provider gone) leaves it for the next scan.
          if (asked && badge.state !== 'unavailable') void folders.lookedAt(asked.header);
        }
        // Only a verdict just obtained acts: a message the user marked "not spam" is never moved again.
        if (!fresh || badge.state !== 'spam' || !asked) return;
        later(async () => {
          const store = await deps.store();
          // The user said "not spam" while the provider was being asked: the user's word wins.
          if ((await store.verdict(asked.account, asked.messageId))?.user) return;
          const header = await api.messages.get(Number(sourceId));
          const from = header.folder?.id;
          const action = await applySpamVerdict(api, header, true, { move: (await store.settings()).moveSpam });
          // Where it came from, to put it back on "Not Junk".
          if (action === 'moved' && from) await store.noteVerdict(asked.account, asked.messageId, { movedFrom: from });
        });
      },
      onFailure: deps.onFailure,
      onOutcome: deps.onOutcome,
      refused: deps.refused,
    },
    deps.failureOf,
  );

  /** Offers one message, if it is the provider's, not checked yet, and decryptable here; or says why not. */
  async function offer(header: MessageHeader): Promise<{ sourceId: string } | { skip: Skip }> {
    const store = await deps.store();
    const provider = await store.provider();
    if (!provider || !(await store.settings()).spamCheck) return { skip: 'off' }; // nothing leaves the device
    const sourceId = String(header.id);
    if (busy.has(sourceId)) return { sourceId };
    const result = await read(header, provider, store);
    // Not the provider's, checked before, or unreadable for good: no scan needs to look at it again.
    if ('skip' in result && result.skip !== 'locked') await folders.lookedAt(header);
    return result;
  }

  async function read(
    header: MessageHeader,
    provider: NonNullable<Awaited<ReturnType<PrivateStore['provider']>>>,
    store: PrivateStore,
  ): Promise<{ sourceId: string } | { skip: Skip }> {
    const sourceId = String(header.id);
    busy.set(sourceId, { account: '', messageId: '', header });
    try {
      const raw = await api.messages.getRaw(header.id, { data_format: 'BinaryString', decrypt: false });
      const messageId = providerIdOf(raw);
      if (!messageId) return { skip: 'not-encrypted' };
      const account = accountOf(provider);
      const stored = await store.verdict(account, messageId);
      if (stored) {
        // One the add-on moved to Junk, found outside Junk and not flagged: the user took it out (on IMAP
        // Thunderbird may report such a move with no destination messages); kept as their correction.
        if (stored.kind === 'verdict' && stored.spam && stored.movedFrom && !stored.user)
          if (!junkFolder(header) && header.junk === false) await store.markByUser(account, messageId, false);
        return { skip: 'checked' };
      }
      const block = findPgpBlocks(raw).find((b) => b.kind === 'encrypted');
      if (!block) return { skip: 'not-encrypted' }; // only decrypted mail is checked, as in Chromium
      let plaintext = await deps.decrypt(block);
      if (plaintext === undefined || plaintext === 'locked') {
        // Thunderbird can say "success" with nothing decrypted (a malformed message): no check is spent on that.
        const text = decryptedText(await api.messages.getFull(header.id, { decrypt: true }));
        if (text) plaintext = `Content-Type: text/plain; charset=utf-8\r\n\r\n${text}`;
        else if (plaintext === 'locked')
          return { skip: 'locked' }; // checked by a scan after the unlock
        else return { skip: 'unreadable' }; // neither the add-on nor Thunderbird can read it
      }
      busy.set(sourceId, { account, messageId, header });
      await queue.offer(provider, messageId, decryptedMessage(raw, plaintext), NO_TAB, sourceId);
      return { sourceId };
    } finally {
      // Not handed to the queue (the placeholder is still there): free to be offered again.
      if (busy.get(sourceId)?.messageId === '') busy.delete(sourceId);
    }
  }

  const check = (headers: MessageHeader[]) => {
    for (const h of headers) later(() => offer(h));
  };

  /**
   * The user corrected a message the add-on found spam: cleared its junk
   * flag ("Not Junk") or moved it out of Junk. Kept with its verdict; a
   * cleared flag in Junk also takes it back to where the add-on moved it
   * from, and a move out of Junk also clears the flag. True if it was the
   * add-on's spam verdict (corrected now or before). `onlyMoved`: only a
   * verdict whose message the add-on itself moved to Junk.
   */
  async function correctedByUser(
    header: MessageHeader,
    how: 'not-junk' | 'moved-out',
    raw: Promise<string | undefined>,
    onlyMoved = false,
  ): Promise<boolean> {
    const store = await deps.store();
    const provider = await store.provider();
    const messageId = providerIdOf((await raw) ?? '');
    if (!provider || !messageId) return false;
    const account = accountOf(provider);
    const v = await store.verdict(account, messageId);
    // Only the add-on's own spam verdicts are its to correct: Thunderbird's own junk filter keeps its mail.
    if (v?.kind !== 'verdict' || !v.spam || (onlyMoved && !v.movedFrom)) return false;
    if (v.user?.spam !== false) await store.markByUser(account, messageId, false);
    if (how === 'moved-out') {
      if (header.junk) await api.messages.update(header.id, { junk: false });
    } else if (junkFolder(header))
      // Thunderbird moves a message marked "Not Junk" in the Junk folder to the Inbox itself:
      // only one still in Junk a moment later is put back here (one move, never two).
      setTimeout(
        () =>
          later(async () => {
            const now = await api.messages.get(header.id).catch(() => undefined);
            if (now && junkFolder(now) && !now.junk)
              await applySpamVerdict(api, now, false, { move: true, backTo: v.movedFrom });
          }),
        deps.putBackAfterMs ?? 2000,
      );
    return true;
  }

  /**
   * "Not Junk" on a message in Junk that was gone by the time the add-on read
   * it: Thunderbird moves it out at once, and an add-on woken by the event
   * (an idle event page) often comes too late. It is looked for under its
   * Message-ID outside Junk in the same account, again as the move completes
   * (relookMs); the provider's id in what is found still decides which
   * verdict it is, and only one the add-on moved to Junk is taken.
   */
  function findMovedOut(gone: MessageHeader, attempt = 0): void {
    later(async () => {
      if (!(await (await deps.store()).provider())) return;
      const found = await allMessages(api, await api.messages.query({ headerMessageId: gone.headerMessageId }));
      for (const h of found) {
        if (h.folder?.accountId !== gone.folder?.accountId || junkFolder(h)) continue;
        if (await correctedByUser(h, 'moved-out', rawOf(h.id), true)) return;
      }
      const wait = (deps.relookMs ?? RELOOK_MS)[attempt];
      if (wait !== undefined) setTimeout(() => findMovedOut(gone, attempt + 1), wait);
      else console.warn('spam check: a message marked "Not Junk" was not found again outside Junk');
    });
  }

  api.messages.onNewMailReceived.addListener((_folder, list) => later(async () => check(await allMessages(api, list))));
  api.messageDisplay.onMessagesDisplayed.addListener((_tab, list) =>
    later(async () => check(await allMessages(api, list))),
  );
  // The add-on itself only ever sets the flag (junk: true) and moves into Junk; the reverse is the user's.
  const rawOf = (id: number) =>
    api.messages.getRaw(id, { data_format: 'BinaryString', decrypt: false }).catch(() => undefined);
  api.messages.onUpdated.addListener((message, changed) => {
    if (changed.junk !== false) return;
    // Read at once: Thunderbird moves a message marked "Not Junk" out of Junk right away, and then this id is gone.
    const raw = rawOf(message.id);
    later(async () => {
      if ((await raw) === undefined && junkFolder(message)) findMovedOut(message);
      else await correctedByUser(message, 'not-junk', raw);
    });
  });
  api.messages.onMoved.addListener((from, to) =>
    later(async () => {
      const [before, after] = [await allMessages(api, from), await allMessages(api, to)];
      for (const [i, h] of after.entries())
        if (before[i] && junkFolder(before[i]) && !junkFolder(h)) await correctedByUser(h, 'moved-out', rawOf(h.id));
    }),
  );

  /**
   * Checks every message of `only` (else of every folder mail arrives in)
   * that nothing looked at since its folder's mark, at most 8 in flight. One
   * scan at a time: asked for while one runs, another follows it (mail may
   * have come meanwhile). A message already checked is skipped (its stored
   * verdict); a locked key stops the scan, and what is left is the next one's.
   */
  let again = false;
  async function scan(only?: MailFolder): Promise<void> {
    if (run) return void (again = true);
    const store = await deps.store();
    if (!(await store.provider()) || !(await store.settings()).spamCheck) return;
    const found = await folders.start(only);
    if (found.headers.length > 0) {
      run = new BacklogRun(
        found.headers.map((header) => ({ href: `thunderbird-message:${header.id}`, header })),
        { offer: ({ header }) => inTurn(() => offer(header)) },
        (p) => deps.onProgress?.(p),
      );
      try {
        await run.start();
      } finally {
        run = undefined;
        deps.onProgress?.(undefined);
      }
    }
    await folders.finish(found);
    if (again) {
      again = false;
      await scan();
    }
  }

  // Thunderbird fetched mail into a folder (the mail that came while it was closed, too): look at it.
  onFolderGrowth(
    api,
    (folder) => void scan(folder).catch((e: unknown) => console.warn('spam check:', (e as Error).name)),
  );

  return { queue, check, scan, idle: () => chain };
}
