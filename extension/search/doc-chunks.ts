// Stored messages are encrypted in chunks of up to CHUNK_DOCS, one AES-GCM
// record each, not one record per message: a WebCrypto call per message was
// a good part of an add (its fixed cost dwarfs encrypting 1.4 KB). A chunk's
// plaintext names each message's sequence number and id tag, so a message
// read through its 'docs' row is checked to be the one that row points to.
//
// Plaintext: u32 (little-endian) byte length of the header, the header as
// UTF-8 JSON [[seq, tag, byteLength], ...], then each message's JSON (UTF-8)
// in header order. Only the message asked for is decoded.
import type { Bytes } from './crypto.js';

/** Messages per chunk: amortizes WebCrypto's per-call cost; a snippet decrypts one chunk (~20 KB). */
export const CHUNK_DOCS = 16;

export interface ChunkEntry {
  seq: number;
  tag: string;
  /** The message's JSON, UTF-8. */
  json: Uint8Array;
}

const utf8 = new TextEncoder();

export function encodeChunk(entries: readonly ChunkEntry[]): Bytes {
  const header = utf8.encode(JSON.stringify(entries.map((e) => [e.seq, e.tag, e.json.length])));
  const out = new Uint8Array(4 + header.length + entries.reduce((n, e) => n + e.json.length, 0));
  new DataView(out.buffer).setUint32(0, header.length, true);
  out.set(header, 4);
  let at = 4 + header.length;
  for (const e of entries) {
    out.set(e.json, at);
    at += e.json.length;
  }
  return out;
}

/** A decrypted chunk's entries; undefined if the bytes are not a well-formed chunk. */
export function decodeChunk(bytes: Bytes): ChunkEntry[] | undefined {
  if (bytes.length < 4) return undefined;
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true);
  if (headerLength > bytes.length - 4) return undefined;
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(4, 4 + headerLength)));
  } catch {
    return undefined;
  }
  if (!Array.isArray(header)) return undefined;
  const entries: ChunkEntry[] = [];
  let at = 4 + headerLength;
  for (const e of header as unknown[]) {
    if (!Array.isArray(e) || e.length !== 3) return undefined;
    const [seq, tag, length] = e as unknown[];
    if (!Number.isInteger(seq) || typeof tag !== 'string' || !Number.isInteger(length)) return undefined;
    if ((length as number) < 0 || at + (length as number) > bytes.length) return undefined;
    entries.push({ seq: seq as number, tag, json: bytes.subarray(at, (at += length as number)) });
  }
  return at === bytes.length ? entries : undefined;
}
