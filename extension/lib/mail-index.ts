// Bridges decryption and the local search index (extension/search). The index
// is encrypted with a key derived from the user's passphrase: an unlock
// derives it (unlock()), and the derived key, not the passphrase, is what
// the unlock cache keeps; the index opens only while that key is kept, and
// closes on lock and expiry. Decrypted mail is added here, in the background,
// and the search page queries it through runtime messages (search/messages.ts).
import {
  answerSearchRequest,
  MailSearchError,
  openMailSearch,
  type MailSearch,
  type SearchRequest,
  type SearchResponse,
} from '../search/index.js';
import type { MailSource } from './messages.js';

export class MailIndex {
  private opening: Promise<MailSearch | null> | undefined;
  private unlocking: Promise<void> | undefined;

  /**
   * indexKey: the derived key kept for the current unlock, if any; keepKey: keeps the one an
   * unlock derived (UnlockCache.setIndexKey).
   */
  constructor(
    private readonly indexKey: () => Promise<Uint8Array<ArrayBuffer> | undefined>,
    private readonly keepKey: (key: Uint8Array<ArrayBuffer>) => Promise<void>,
    private readonly dbName?: string,
  ) {}

  /** The open index, or null while locked (no derived key kept). */
  private async open(): Promise<MailSearch | null> {
    // Mail decrypted right after an unlock waits for the key that unlock is deriving.
    await this.unlocking;
    const derivedKey = await this.indexKey();
    if (!derivedKey) {
      // Keys expired or were locked: the index key goes with them.
      await this.close();
      return null;
    }
    this.opening ??= openMailSearch({ derivedKey, dbName: this.dbName });
    return this.settle(this.opening);
  }

  /**
   * After an unlock: opens (or creates) the index with that passphrase unless one is open, and
   * keeps the key it derives. An index created under another key's passphrase stays closed
   * until that one is unlocked. Deriving (600,000 rounds of PBKDF2: ~0.2 s on a quiet machine,
   * over 1 s on a busy one) runs while the user types a query rather than after; requests
   * arriving meanwhile wait for it. Failures surface at the next use.
   */
  async unlock(passphrase: string): Promise<void> {
    const unlocking = (this.unlocking = this.openWith(passphrase));
    try {
      await unlocking;
    } finally {
      if (this.unlocking === unlocking) this.unlocking = undefined;
    }
  }

  private async openWith(passphrase: string): Promise<void> {
    if (this.opening && (await this.opening.catch(() => null))) return;
    let derived: Uint8Array<ArrayBuffer> | undefined;
    const opening = openMailSearch({ passphrase, dbName: this.dbName, onDerivedKey: (k) => (derived = k) }).catch(
      (e: unknown) => {
        if (e instanceof MailSearchError && e.code === 'wrong-key') return null;
        throw e;
      },
    );
    this.opening = opening.then(async (s) => {
      if (s && derived) await this.keepKey(derived);
      return s;
    });
    await this.settle(this.opening).catch(() => null);
  }

  /** A failed or refused opening is forgotten, so the next use or unlock tries again. */
  private settle(opening: Promise<MailSearch | null>): Promise<MailSearch | null> {
    return opening.then(
      (s) => {
        if (!s && this.opening === opening) this.opening = undefined;
        return s;
      },
      (e: unknown) => {
        if (this.opening === opening) this.opening = undefined;
        throw e;
      },
    );
  }

  async add(source: MailSource, body: string, protectedSubject?: string): Promise<boolean> {
    const search = await this.open();
    if (!search) return false;
    const date = Number.isFinite(Date.parse(source.date)) ? source.date : Date.now();
    await search.add({
      id: source.id,
      from: source.from,
      to: source.to,
      subject: protectedSubject ?? source.subject,
      date,
      body,
      url: source.url,
    });
    return true;
  }

  /**
   * Makes every message added so far durable (add() is write-behind: it is
   * searchable at once, written within MailSearch's FLUSH_DELAY_MS). For the
   * end of a mailbox indexing run, whose resumption relies on has().
   */
  async flush(): Promise<void> {
    const search = await this.opening?.catch(() => null);
    await search?.flush();
  }

  /** The protected subjects of the indexed messages among `ids` (none while locked). */
  async subjects(ids: readonly string[]): Promise<Map<string, string>> {
    const search = await this.open();
    return search ? search.subjects(ids) : new Map();
  }

  /** Whether a message is indexed (false while locked). */
  async has(id: string): Promise<boolean> {
    const search = await this.open();
    return search ? search.has(id) : false;
  }

  /** Drops a message from the index (false if locked or not indexed). */
  async remove(id: string): Promise<boolean> {
    const search = await this.open();
    return search ? search.remove(id) : false;
  }

  async answer(req: SearchRequest): Promise<SearchResponse> {
    return answerSearchRequest(req, await this.open().catch(() => null));
  }

  /** Closes the index (on lock); queued messages are written first. */
  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    const search = await opening?.catch(() => null);
    // A failed last write must not stop the lock; those messages are re-indexed when seen again.
    await search?.close().catch((e: unknown) => console.warn('search index:', (e as Error).name));
  }
}
