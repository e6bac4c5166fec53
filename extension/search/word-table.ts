// A bounded hash table of words, looked up by a character range of a text:
// tokenizing a message then cuts out (allocates) only the words the table
// does not hold yet. Splitting every field into substrings and hashing each
// one in a Map was most of the cost of tokenizing a message, and its garbage
// a good part of the collector's work during indexing.

/** An entry: the word it is stored under, and whatever the caller keeps with it. */
export interface WordKeyed {
  readonly word: string;
}

/** FNV-1a over the UTF-16 code units of text[start, end), finished with murmur3's mix. */
export function hashRange(text: string, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function sameWord(word: string, text: string, start: number, end: number): boolean {
  if (word.length !== end - start) return false;
  for (let i = 0; i < word.length; i++) if (word.charCodeAt(i) !== text.charCodeAt(start + i)) return false;
  return true;
}

/**
 * Slots one lookup or insertion looks at. Mail is written by strangers, and
 * this hash is not keyed: a message of words made to share a slot would make
 * every probe walk the whole cluster (quadratic). Past this many a word is
 * treated as absent and not stored; its caller computes it again each time.
 */
const MAX_PROBES = 32;

/** Open addressing with linear probing, at most `capacity` entries (then `full`; nothing is ever removed). */
export class WordTable<E extends WordKeyed> {
  /** Entry index + 1 per slot, 0 for an empty slot; at most half the slots are used. */
  private readonly slots: Int32Array;
  private readonly hashes: Int32Array;
  private readonly entries: E[] = [];

  constructor(readonly capacity: number) {
    let size = 2;
    while (size < 2 * capacity) size *= 2;
    this.slots = new Int32Array(size);
    this.hashes = new Int32Array(capacity);
  }

  get full(): boolean {
    return this.entries.length >= this.capacity;
  }

  /** The entry of the word text[start, end), whose hashRange is `hash`. */
  get(text: string, start: number, end: number, hash: number): E | undefined {
    const mask = this.slots.length - 1;
    for (let i = hash & mask, probes = 0; probes < MAX_PROBES; i = (i + 1) & mask, probes++) {
      const at = this.slots[i] - 1;
      if (at < 0) return undefined;
      if (this.hashes[at] === hash && sameWord(this.entries[at].word, text, start, end)) return this.entries[at];
    }
    return undefined;
  }

  /**
   * Adds an entry whose word is not in the table (hash = hashRange of the
   * word); the table must not be full. False: its slots are taken
   * (MAX_PROBES), and it was not stored.
   */
  add(entry: E, hash: number): boolean {
    if (this.full) throw new Error('word table is full');
    const mask = this.slots.length - 1;
    let i = hash & mask;
    for (let probes = 0; this.slots[i] !== 0; i = (i + 1) & mask) if (++probes === MAX_PROBES) return false;
    this.hashes[this.entries.length] = hash;
    this.entries.push(entry);
    this.slots[i] = this.entries.length;
    return true;
  }
}
