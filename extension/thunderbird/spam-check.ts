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
import { decryptedMessage } from '../../mail/decrypt.js';
import { providerIdOf } from '../../mail/message-id.js';
import { findPgpBlocks, type PgpBlock } from '../../mail/pgp.js';
import { SpamQueue, type FailureOf, type QueueDeps } from '../private/spam-queue.js';
import { accountOf, type PrivateStore } from '../private/store.js';
import { allMessages, type MessageHeader, type ThunderbirdApi } from './api.js';
import { partsText } from './displayed-message.js';
import { applySpamVerdict } from './junk.js';

export interface SpamCheckDeps {
  store(): Promise<PrivateStore>;
  classify: QueueDeps['classify'];
  /** The extension's own decryption: the decrypted data (a MIME entity or text), or undefined. */
  decrypt(block: PgpBlock): Promise<string | undefined>;
  failureOf: FailureOf;
  onFailure?: QueueDeps['onFailure'];
  onOutcome?: QueueDeps['onOutcome'];
}

/** Queue entries need a target; Thunderbird's are messages, named by their Thunderbird id. */
const NO_TAB = { tabId: -1 };

/** Registers the listeners; returns the queue (to drop waiting messages on lock or reconnect) and check(). */
export function watchSpam(api: ThunderbirdApi, deps: SpamCheckDeps) {
  // One message read and decrypted at a time: a burst of new mail must not decrypt in parallel.
  let chain: Promise<unknown> = Promise.resolve();
  const later = (job: () => Promise<unknown>) => {
    chain = chain.then(job).catch((e: unknown) => console.warn('spam check:', (e as Error).name));
  };

  /** Thunderbird ids read or waiting for an outcome: a message shown while it arrives is offered once. */
  const busy = new Set<string>();
  const queue = new SpamQueue(
    {
      store: deps.store,
      classify: deps.classify,
      notify: (_target, sourceId, badge, fresh) => {
        if (badge.state === 'checking') return;
        busy.delete(sourceId);
        // Only a verdict just obtained acts: a message the user marked "not spam" is never moved again.
        if (!fresh || badge.state !== 'spam') return;
        later(async () => {
          const header = await api.messages.get(Number(sourceId));
          await applySpamVerdict(api, header, true, { move: (await (await deps.store()).settings()).moveSpam });
        });
      },
      onFailure: deps.onFailure,
      onOutcome: deps.onOutcome,
    },
    deps.failureOf,
  );

  /** Offers one message, if it is the provider's, not checked yet, and decryptable here. */
  async function offer(header: MessageHeader): Promise<void> {
    const store = await deps.store();
    if (!(await store.settings()).spamCheck) return; // off: nothing about any message leaves the device
    const provider = await store.provider();
    const sourceId = String(header.id);
    if (!provider || busy.has(sourceId)) return;
    busy.add(sourceId);
    let offered = false;
    try {
      const raw = await api.messages.getRaw(header.id, { data_format: 'BinaryString', decrypt: false });
      const messageId = providerIdOf(raw);
      if (!messageId || (await store.verdict(accountOf(provider), messageId))) return;
      const block = findPgpBlocks(raw).find((b) => b.kind === 'encrypted');
      if (!block) return; // only decrypted mail is checked, as in Chromium
      let plaintext = await deps.decrypt(block);
      if (plaintext === undefined) {
        const full = await api.messages.getFull(header.id, { decrypt: true });
        if (full.decryptionStatus !== 'success') return; // neither the add-on nor Thunderbird holds the key
        plaintext = `Content-Type: text/plain; charset=utf-8\r\n\r\n${partsText(full)}`;
      }
      offered = true;
      await queue.offer(provider, messageId, decryptedMessage(raw, plaintext), NO_TAB, sourceId);
    } finally {
      if (!offered) busy.delete(sourceId);
    }
  }

  const check = (headers: MessageHeader[]) => {
    for (const h of headers) later(() => offer(h));
  };
  api.messages.onNewMailReceived.addListener((_folder, list) => later(async () => check(await allMessages(api, list))));
  api.messageDisplay.onMessagesDisplayed.addListener((_tab, list) =>
    later(async () => check(await allMessages(api, list))),
  );
  return { queue, check, idle: () => chain };
}
