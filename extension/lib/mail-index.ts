// Bridges decryption and the local search index (extension/search). The index
// is encrypted with a key derived from the user's passphrase, so it opens
// only while a key is unlocked, with the passphrase that unlocked it; it
// closes on lock. Decrypted mail is added here, in the background, and the
// search page queries it through runtime messages (search/messages.ts).
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

  /** passphrases: those of the currently unlocked keys, first unlocked first. */
  constructor(
    private readonly passphrases: () => Promise<string[]>,
    private readonly dbName?: string,
  ) {}

  /** The open index, or null while locked (or no passphrase opens it). */
  private async open(): Promise<MailSearch | null> {
    const live = await this.passphrases();
    if (live.length === 0) {
      // Keys expired or were locked: the index key goes with them.
      await this.close();
      return null;
    }
    this.opening ??= (async () => {
      for (const passphrase of live) {
        try {
          return await openMailSearch({ passphrase, dbName: this.dbName });
        } catch (e) {
          // The index was created under another key's passphrase: try the next.
          if (!(e instanceof MailSearchError && e.code === 'wrong-key')) throw e;
        }
      }
      return null;
    })().catch((e) => {
      this.opening = undefined;
      throw e;
    });
    return this.opening.then((s) => {
      if (!s) this.opening = undefined; // retry after the next unlock
      return s;
    });
  }

  /**
   * Opens the index right after an unlock, so deriving its key (600,000
   * rounds of PBKDF2: ~0.2 s on a quiet machine, over 1 s on a busy one) runs
   * while the user types a query rather than after. Failures surface at the
   * next use.
   */
  async warmUp(): Promise<void> {
    await this.open().catch(() => null);
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
