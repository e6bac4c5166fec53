// Messages added but not yet committed to IndexedDB (queued by add(), or
// being written), indexed in memory so a query answers with them without
// writing them first: a query never waits for the writer. Each is tokenized
// once, here; the writer adds the same prepared form to the hot shard.
//
// Pending messages get sequence numbers of their own, above any stored one
// (so ties go to them, the newest), and at most one version per id is live:
// a stored message with a pending id is an older version, left out of answers.
import type { CompiledQuery } from './lunr-shard.js';
import { indexable, type StoredDoc } from './mail-doc.js';
import { ShardBuilder, type PreparedDoc } from './shard-builder.js';
import type { CompactShard } from './compact-shard.js';

/** Sequence numbers of pending messages start here (stored ones stay far below; shards keep Int32 seqs). */
const FIRST_PENDING_SEQ = 2 ** 30;
/** The builder is rebuilt from the live messages once this many retired ones sit in it. */
const MAX_RETIRED = 256;

interface Entry {
  doc: StoredDoc;
  prepared: PreparedDoc;
}

export class PendingShard {
  private builder = new ShardBuilder();
  private nextSeq = FIRST_PENDING_SEQ;
  private readonly live = new Map<number, Entry>();
  private readonly seqOfId = new Map<string, number>();
  private readonly seqOfDoc = new Map<StoredDoc, number>();
  /** Messages still in the builder but no longer pending (written, replaced or dropped). */
  private readonly retired = new Set<number>();

  /** Indexes a newly queued message; an earlier pending version of its id retires. */
  put(doc: StoredDoc): void {
    const old = this.seqOfId.get(doc.id);
    if (old !== undefined) this.retire(this.live.get(old)!.doc);
    const seq = this.nextSeq++;
    const prepared = this.builder.prepare(indexable(doc, seq));
    this.builder.add(prepared);
    this.live.set(seq, { doc, prepared });
    this.seqOfId.set(doc.id, seq);
    this.seqOfDoc.set(doc, seq);
  }

  /** The message's tokenized form, for the hot shard (its own sequence number put in). */
  prepared(doc: StoredDoc, seq: number): PreparedDoc | undefined {
    const at = this.seqOfDoc.get(doc);
    return at === undefined ? undefined : { ...this.live.get(at)!.prepared, seq };
  }

  /** The message is committed (now in the hot shard) or dropped: no longer pending. */
  retire(doc: StoredDoc): void {
    const seq = this.seqOfDoc.get(doc);
    if (seq === undefined) return;
    this.seqOfDoc.delete(doc);
    this.live.delete(seq);
    if (this.seqOfId.get(doc.id) === seq) this.seqOfId.delete(doc.id);
    this.retired.add(seq);
    if (this.live.size === 0) this.reset();
  }

  /** Rebuilds the builder from the live messages once enough retired ones sit in it (bounds its memory). */
  compact(): void {
    if (this.retired.size < MAX_RETIRED) return;
    this.builder = new ShardBuilder();
    this.retired.clear();
    for (const { prepared } of this.live.values()) this.builder.add(prepared);
  }

  private reset(): void {
    this.builder = new ShardBuilder();
    this.retired.clear();
  }

  get size(): number {
    return this.live.size;
  }

  /** Whether a message of this id is pending (a stored one of the same id is then superseded). */
  hasId(id: string): boolean {
    return this.seqOfId.has(id);
  }

  /** A pending message by its (pending) sequence number. */
  doc(seq: number): StoredDoc | undefined {
    return this.live.get(seq)?.doc;
  }

  /** The query form of the pending messages, and the retired ones to leave out. */
  forQuery(q: CompiledQuery): { shard: CompactShard; dead: ReadonlySet<number> } {
    return { shard: this.builder.forQuery(q), dead: this.retired };
  }
}
