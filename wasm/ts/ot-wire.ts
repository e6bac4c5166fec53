// Byte-level helpers shared by the OT and GC message codecs: a bounds-checked
// reader and writer (little-endian), and the error type for malformed input.

/**
 * How the other party's message failed: `malformed` (size, type, range or
 * order), or `rejected` by a cryptographic check, after which the session is
 * over for good.
 */
export type WireFault = 'malformed' | 'rejected';

/** A message from the other party failed; `fault` says how. */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
  constructor(
    message: string,
    readonly fault: WireFault = 'malformed',
  ) {
    super(message);
  }
}

/** Message tags (first byte of every GC/OT message); the second byte is the format version. */
export const enum Tag {
  OtBaseA = 0x01,
  OtBaseB = 0x02,
  OtExtend = 0x03,
  GcChoice = 0x10,
  GcSpam = 0x11,
  GcArgmax = 0x12,
  GcLabels = 0x13,
}

/**
 * 2: ChaCha20 label hash and the transcript-bound KOS challenge. A version-1
 * peer would not fail loudly otherwise (wrong labels read as "not spam", or a
 * KOS abort blamed on the receiver), so it is refused by version.
 * 3: gc_spam and gc_argmax carry a 16-byte seed of the garbler's input labels
 * instead of the labels (a version-2 peer would misread the message's length).
 */
export const WIRE_VERSION = 3;

export class Reader {
  private pos = 0;
  constructor(
    private readonly buf: Uint8Array,
    private readonly what: string,
  ) {}

  /** Checks tag and version. */
  header(tag: Tag): this {
    if (this.buf.length < 2) throw new ProtocolError(`${this.what}: message too short (${this.buf.length} bytes)`);
    if (this.buf[0] !== tag) throw new ProtocolError(`${this.what}: wrong message type 0x${this.buf[0].toString(16)}`);
    if (this.buf[1] !== WIRE_VERSION)
      throw new ProtocolError(`${this.what}: unsupported format version ${this.buf[1]}`);
    this.pos = 2;
    return this;
  }

  u8(): number {
    return this.take(1)[0];
  }

  u16(): number {
    const b = this.take(2);
    return b[0] | (b[1] << 8);
  }

  u32(): number {
    const b = this.take(4);
    return (b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24)) >>> 0;
  }

  /** A 64-bit value below 2^53. */
  u53(): number {
    const lo = this.u32();
    const hi = this.u32();
    if (hi >= 1 << 21) throw new ProtocolError(`${this.what}: 64-bit field out of range`);
    return hi * 2 ** 32 + lo;
  }

  bytes(n: number): Uint8Array {
    return this.take(n);
  }

  /** The whole message must have been consumed: exact sizes only. */
  end(): void {
    if (this.pos !== this.buf.length) {
      throw new ProtocolError(`${this.what}: expected ${this.pos} bytes, got ${this.buf.length}`);
    }
  }

  /** Throws unless the remaining length is exactly n (checked before any allocation). */
  expectRemaining(n: number): void {
    if (this.buf.length - this.pos !== n) {
      throw new ProtocolError(`${this.what}: expected ${this.pos + n} bytes, got ${this.buf.length}`);
    }
  }

  private take(n: number): Uint8Array {
    if (this.pos + n > this.buf.length) throw new ProtocolError(`${this.what}: truncated message`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

export class Writer {
  private pos = 0;
  readonly buf: Uint8Array;

  constructor(size: number, tag: Tag) {
    this.buf = new Uint8Array(size);
    this.buf[0] = tag;
    this.buf[1] = WIRE_VERSION;
    this.pos = 2;
  }

  u8(v: number): this {
    this.buf[this.pos++] = v;
    return this;
  }

  u16(v: number): this {
    this.buf[this.pos++] = v & 0xff;
    this.buf[this.pos++] = (v >>> 8) & 0xff;
    return this;
  }

  u32(v: number): this {
    for (let i = 0; i < 4; i++) this.buf[this.pos++] = (v >>> (8 * i)) & 0xff;
    return this;
  }

  u53(v: number): this {
    return this.u32(v % 2 ** 32).u32(Math.floor(v / 2 ** 32));
  }

  bytes(b: Uint8Array): this {
    this.buf.set(b, this.pos);
    this.pos += b.length;
    return this;
  }

  /** The finished message; throws if the size computed up front was wrong. */
  done(): Uint8Array {
    if (this.pos !== this.buf.length) throw new Error(`internal: message size ${this.pos} != ${this.buf.length}`);
    return this.buf;
  }
}

/** Unpacks n bits; padding bits past n must be zero (one encoding per message). */
export function unpackBits(bytes: Uint8Array, n: number, what: string): Uint8Array {
  if (bytes.length !== (n + 7) >> 3) throw new ProtocolError(`${what}: wrong bit-vector length`);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (bytes[i >> 3] >> (i & 7)) & 1;
  if (n % 8 !== 0 && bytes[bytes.length - 1] >> (n % 8) !== 0) throw new ProtocolError(`${what}: nonzero padding bits`);
  return out;
}

export function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 65536) globalThis.crypto.getRandomValues(out.subarray(i, Math.min(n, i + 65536)));
  return out;
}
