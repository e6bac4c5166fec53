// Replay defense for topic extraction (docs/threat-model.md#p3-at-most-once, docs/protocol.md#at-most-once-classification): an email is fed
// to topic extraction at most once. A provider that delivers the same email
// again (under the same or a new message id, with other candidates or another
// model) would otherwise learn more about it with every run. The client keeps
// (message id, content hash) of every email it fed, persistently, and refuses
// a message id or a content it has seen. The content hash is over the feature
// vector, the only thing extraction depends on, so re-wrapping the same text
// in new headers does not get past it. Recorded before anything leaves the
// device: a crash mid-request still counts as fed. Env-free: the CLI keeps the
// log in a file (topic-replay-file.ts), the extension in IndexedDB.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import type { Features } from '../../models/features/index.js';

export interface ReplayEntry {
  messageId: string;
  /** Hex SHA-256 of the feature vector (see contentHash). */
  contentHash: string;
}

/** Persistent storage of the fed emails. */
export interface ReplayStore {
  load(): Promise<ReplayEntry[]>;
  /** Appends one entry durably before resolving. */
  append(entry: ReplayEntry): Promise<void>;
  /**
   * Appends it in one atomic step unless its id or content is stored already
   * (then says which, appending nothing). A store several realms write at
   * once (the extension's workers) must have it: their logs loaded in memory
   * do not see each other's entries.
   */
  appendNew?(entry: ReplayEntry): Promise<ReplayRefused['reason'] | undefined>;
}

/** Thrown when an email (by id or content) was already fed to topic extraction. */
export class ReplayRefused extends Error {
  constructor(
    readonly messageId: string,
    readonly reason: 'message_id' | 'content',
  ) {
    super(
      reason === 'message_id'
        ? `message ${messageId} was already fed to topic extraction; refusing a second time`
        : `message ${messageId} has the content of an email already fed to topic extraction; refusing a second time`,
    );
    this.name = 'ReplayRefused';
  }
}

/** SHA-256 over the model's feature spec id and the (row, count) pairs. */
export function contentHash(features: Features, specId: string): string {
  const bytes = new Uint8Array(8 * features.rows.length);
  const view = new DataView(bytes.buffer);
  features.rows.forEach((r, i) => {
    view.setUint32(8 * i, r);
    view.setUint32(8 * i + 4, features.counts[i]);
  });
  const digest = sha256
    .create()
    .update(new TextEncoder().encode(`pmf-topic-replay\0${specId}\0`))
    .update(bytes);
  bytes.fill(0);
  return bytesToHex(digest.digest());
}

export class ReplayLog {
  /** Emails the provider confirmed it never answered (see allowRetry), by id and content hash. */
  private readonly retries = new Set<string>();

  private constructor(
    private readonly store: ReplayStore,
    private readonly ids: Set<string>,
    private readonly hashes: Set<string>,
  ) {}

  static async open(store: ReplayStore): Promise<ReplayLog> {
    const entries = await store.load();
    return new ReplayLog(store, new Set(entries.map((e) => e.messageId)), new Set(entries.map((e) => e.contentHash)));
  }

  /** Throws ReplayRefused when the email was fed before (records nothing). */
  check(entry: ReplayEntry): void {
    if (this.retries.has(retryKey(entry))) return;
    if (this.ids.has(entry.messageId)) throw new ReplayRefused(entry.messageId, 'message_id');
    if (this.hashes.has(entry.contentHash)) throw new ReplayRefused(entry.messageId, 'content');
  }

  /** Records the email as fed, or throws ReplayRefused if its id or content was fed before. */
  async admit(entry: ReplayEntry): Promise<void> {
    if (this.retries.delete(retryKey(entry))) return; // logged when it was first fed
    this.check(entry);
    const seen = this.store.appendNew ? await this.store.appendNew(entry) : await this.store.append(entry);
    this.ids.add(entry.messageId);
    this.hashes.add(entry.contentHash);
    if (seen) throw new ReplayRefused(entry.messageId, seen);
  }

  /**
   * Lets one new request go for an email whose request the provider says it
   * never answered (not_answered, before any topic_gc reached this client):
   * no garbled circuit, hence no output, came of it, so a second run gives
   * the provider one output in all. In memory only: after a restart the
   * email counts as fed.
   */
  allowRetry(entry: ReplayEntry): void {
    this.retries.add(retryKey(entry));
  }
}

const retryKey = (e: ReplayEntry): string => `${e.messageId}\0${e.contentHash}`;

/** A ReplayStore in memory (tests, demo): forgets on exit, so not a defense across runs. */
export class MemoryReplayStore implements ReplayStore {
  readonly entries: ReplayEntry[] = [];

  async load(): Promise<ReplayEntry[]> {
    return [...this.entries];
  }

  async append(entry: ReplayEntry): Promise<void> {
    this.entries.push(entry);
  }
}
