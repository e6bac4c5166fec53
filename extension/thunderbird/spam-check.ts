// Thunderbird: the private spam check of new and displayed mail. Only mail
// the provider delivered is asked about, under the id its LMTP stage wrote
// (X-PMF-Message-Id, outside the encryption): never the sender's Message-ID,
// and nothing for mail without it (another account's, Local Folders). The
// message is decrypted with the extension's keys or, failing that, taken
// from Thunderbird's own OpenPGP (messages.getFull), and classified by the
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
// looked for again under its Message-ID (findMovedOut). Mail that arrived while the keys were
// locked (and Thunderbird could not decrypt it either) is remembered by its
// Thunderbird id and checked after the next unlock (catchUp), through the
// backlog's runner (private/backlog.ts: at most 8 in flight).
import { decryptedMessage } from '../../mail/decrypt.js';
import { providerIdOf } from '../../mail/message-id.js';
import { findPgpBlocks, type PgpBlock } from '../../mail/pgp.js';
import { BacklogRun, type Skip } from '../private/backlog.js';
import { SpamQueue, type FailureOf, type QueueDeps } from '../private/spam-queue.js';
import { accountOf, type PrivateStore } from '../private/store.js';
import { allMessages, type MessageHeader, type ThunderbirdApi } from './api.js';
import { partsText } from './displayed-message.js';
import { applySpamVerdict } from './junk.js';
import type { PendingArea } from './live-index.js';

export interface SpamCheckDeps {
  store(): Promise<PrivateStore>;
  classify: QueueDeps['classify'];
  /** The extension's own decryption: the decrypted data (a MIME entity or text), 'locked', or undefined (not for its keys). */
  decrypt(block: PgpBlock): Promise<string | 'locked' | undefined>;
  failureOf: FailureOf;
  onFailure?: QueueDeps['onFailure'];
  onOutcome?: QueueDeps['onOutcome'];
  /** Where the ids of mail that arrived while locked wait for the unlock (storage.local; ids only, never content). */
  pending?: PendingArea;
  /**
   * How long after the user's "Not Junk" to look whether Thunderbird moved
   * the message itself (it does so for "Not Junk" in the Junk folder)
   * before putting it back; 2 s unless given.
   */
  putBackAfterMs?: number;
  /** The waits between looks for a message a "Not Junk" moved before the add-on could read it; RELOOK_MS unless given. */
  relookMs?: number[];
}

/** Queue entries need a target; Thunderbird's are messages, named by their Thunderbird id. */
const NO_TAB = { tabId: -1 };
/** storage.local key of the Thunderbird ids waiting for an unlock to be checked. */
export const SPAM_PENDING = 'pmf-tb-spam-pending';
/** At most this many wait (the newest): a long-locked add-on does not grow without bound. */
export const SPAM_PENDING_MAX = 2000;
/** About 30 s of looks in all: an IMAP move shows up in the destination once Thunderbird has synced it. */
const RELOOK_MS = [500, 1000, 2000, 4000, 8000, 15_000];
const junkFolder = (h: MessageHeader) => h.folder?.specialUse?.includes('junk') === true;

/** Registers the listeners; returns the queue (to drop waiting messages on lock or reconnect), check() and catchUp(). */
export function watchSpam(api: ThunderbirdApi, deps: SpamCheckDeps) {
  // One message read and decrypted at a time: a burst of new mail must not decrypt in parallel.
  let chain: Promise<unknown> = Promise.resolve();
  const later = (job: () => Promise<unknown>) => {
    chain = chain.then(job).catch((e: unknown) => console.warn('spam check:', (e as Error).name));
  };
  /** later(), and the job's result. */
  const inTurn = <T>(job: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => later(() => job().then(resolve, reject)));

  // Waiting ids, changed one step at a time (a get and a set each).
  let pendingChain: Promise<unknown> = Promise.resolve();
  const changePending = (change: (ids: number[]) => number[]) =>
    (pendingChain = pendingChain
      .then(async () => {
        if (!deps.pending) return;
        const ids = ((await deps.pending.get(SPAM_PENDING))[SPAM_PENDING] as number[] | undefined) ?? [];
        const next = change(ids);
        if (next.length !== ids.length || next.some((id, i) => id !== ids[i]))
          await deps.pending.set({ [SPAM_PENDING]: next });
      })
      .catch((e: unknown) => console.warn('spam check:', (e as Error).name)));
  const remember = (id: number) =>
    changePending((ids) => (ids.includes(id) ? ids : [...ids, id].slice(-SPAM_PENDING_MAX)));
  const done = (id: number) => changePending((ids) => ids.filter((x) => x !== id));

  /** Thunderbird ids read or waiting for an outcome (a message shown while it arrives is offered once), and under which id. */
  const busy = new Map<string, { account: string; messageId: string }>();
  let run: BacklogRun<{ href: string; id: number }> | undefined;
  const queue = new SpamQueue(
    {
      store: deps.store,
      classify: deps.classify,
      notify: (_target, sourceId, badge, fresh) => {
        if (badge.state === 'checking') return;
        const asked = busy.get(sourceId);
        busy.delete(sourceId);
        run?.settled(sourceId);
        // An outcome is final; "unavailable" (locked meanwhile, provider down) is tried again at the next catch-up.
        if (badge.state !== 'unavailable') void done(Number(sourceId));
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
    },
    deps.failureOf,
  );

  /** Offers one message, if it is the provider's, not checked yet, and decryptable here; or says why not. */
  async function offer(header: MessageHeader): Promise<{ sourceId: string } | { skip: Skip }> {
    const store = await deps.store();
    if (!(await store.settings()).spamCheck) return { skip: 'unreadable' }; // off: nothing leaves the device
    const provider = await store.provider();
    const sourceId = String(header.id);
    if (!provider) return { skip: 'unreadable' };
    if (busy.has(sourceId)) return { sourceId };
    busy.set(sourceId, { account: '', messageId: '' });
    /** Offered, or waiting for an unlock: its id stays pending until its outcome. */
    let kept = false;
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
        const full = await api.messages.getFull(header.id, { decrypt: true });
        if (full.decryptionStatus === 'success')
          plaintext = `Content-Type: text/plain; charset=utf-8\r\n\r\n${partsText(full)}`;
        else if (plaintext === 'locked') {
          kept = true;
          await remember(header.id); // checked after the next unlock
          return { skip: 'locked' };
        } else return { skip: 'unreadable' }; // neither the add-on nor Thunderbird holds the key
      }
      busy.set(sourceId, { account, messageId });
      kept = true;
      await queue.offer(provider, messageId, decryptedMessage(raw, plaintext), NO_TAB, sourceId);
      return { sourceId };
    } finally {
      // Not handed to the queue (the placeholder is still there): free to be offered again.
      if (busy.get(sourceId)?.messageId === '') busy.delete(sourceId);
      if (!kept) void done(header.id);
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
   * After an unlock: checks the mail that arrived while locked, at most 8 in
   * flight. Ids stay stored until their outcome, so a restart mid-way loses
   * none; one already checked is skipped (its stored verdict).
   */
  async function catchUp(): Promise<void> {
    if (run) return; // one at a time; a later unlock picks up what is left
    await changePending((ids) => ids);
    const ids = ((await deps.pending?.get(SPAM_PENDING))?.[SPAM_PENDING] as number[] | undefined) ?? [];
    if (ids.length === 0) return;
    const items = ids.map((id) => ({ href: `thunderbird-message:${id}`, id }));
    run = new BacklogRun(
      items,
      {
        offer: async ({ id }) => {
          // A message moved or deleted since has another id or none: forget it (a move re-announces it).
          const header = await api.messages.get(id).catch(() => undefined);
          if (!header) {
            await done(id);
            return { skip: 'unreadable' };
          }
          return inTurn(() => offer(header));
        },
      },
      () => {},
    );
    try {
      await run.start();
    } finally {
      run = undefined;
    }
  }

  return { queue, check, catchUp, idle: () => chain };
}
