// A document's record at the provider: what a device shows for a result and
// how it opens the message, sealed at a fixed size (RECORD_BYTES) so that
// no length says anything. Layout of the plaintext (big-endian):
//   u8 version (1) · u32 date high · u32 date low (ms) · then four fields,
//   each u16 length + UTF-8: delivery id, link, subject, sender · zero padding.
// The delivery id must fit whole; a link that does not fit is left out; the
// subject and then the sender are cut (at a character boundary) to what is left.
import { RECORD_PLAIN_BYTES } from '../../../protocol/remote-search.js';

export interface DocRecord {
  /** The id the message was delivered under: what dedups it, and what a device fetches it by. */
  deliveryId: string;
  /** ms since the epoch. */
  date: number;
  /** Where the device that indexed it opened it (the webmail's page, mid: in Thunderbird). */
  url: string;
  subject: string;
  from: string;
}

const VERSION = 1;
const HEADER = 1 + 8 + 4 * 2;
export const MAX_DELIVERY_ID_BYTES = 256;
const CAPS = { url: 320, subject: 200, from: 160 } as const;

const utf8 = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** The first bytes of `s`'s UTF-8, at most `max`, never splitting a character. */
function cut(s: string, max: number): Uint8Array {
  const b = utf8.encode(s);
  if (b.length <= max) return b;
  let end = max;
  while (end > 0 && (b[end] & 0xc0) === 0x80) end--;
  return b.subarray(0, end);
}

export function encodeRecord(r: DocRecord): Uint8Array {
  const id = utf8.encode(r.deliveryId);
  if (id.length === 0 || id.length > MAX_DELIVERY_ID_BYTES)
    throw new RangeError(`a delivery id must be 1..${MAX_DELIVERY_ID_BYTES} bytes`);
  if (!Number.isSafeInteger(r.date) || r.date < 0) throw new RangeError('a record date must be ms since the epoch');
  let room = RECORD_PLAIN_BYTES - HEADER - id.length;
  const fullUrl = utf8.encode(r.url);
  const url = fullUrl.length <= Math.min(CAPS.url, room) ? fullUrl : new Uint8Array(0);
  room -= url.length;
  const subject = cut(r.subject, Math.min(CAPS.subject, room));
  room -= subject.length;
  const from = cut(r.from, Math.min(CAPS.from, room));
  const out = new Uint8Array(RECORD_PLAIN_BYTES);
  const v = new DataView(out.buffer);
  out[0] = VERSION;
  v.setUint32(1, Math.floor(r.date / 2 ** 32));
  v.setUint32(5, r.date >>> 0);
  let off = 9;
  for (const f of [id, url, subject, from]) {
    v.setUint16(off, f.length);
    out.set(f, off + 2);
    off += 2 + f.length;
  }
  return out;
}

/** Throws RangeError for anything but a well-formed version-1 record. */
export function decodeRecord(plain: Uint8Array): DocRecord {
  if (plain.length !== RECORD_PLAIN_BYTES || plain[0] !== VERSION) throw new RangeError('not a version-1 record');
  const v = new DataView(plain.buffer, plain.byteOffset, plain.byteLength);
  const date = v.getUint32(1) * 2 ** 32 + v.getUint32(5);
  let off = 9;
  const field = (): string => {
    const n = v.getUint16(off);
    if (off + 2 + n > plain.length) throw new RangeError('a record field overruns the record');
    const s = decoder.decode(plain.subarray(off + 2, off + 2 + n));
    off += 2 + n;
    return s;
  };
  const [deliveryId, url, subject, from] = [field(), field(), field(), field()];
  return { deliveryId, date, url, subject, from };
}
