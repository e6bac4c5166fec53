// C2SP signed notes (c2sp.org/signed-note) with Ed25519 signatures and C2SP
// timestamped witness cosignatures (c2sp.org/tlog-cosignature), the formats of
// the package log's checkpoints. Signing and verifying are @noble/curves'
// Ed25519; this file only frames bytes. Checked against x/mod's note examples
// and against notes and cosignatures made by Go's x/mod and torchwood
// (protocol/test/signed-note.test.ts).
//
//   note      = text ‖ "\n" ‖ signature line*        (text ends in "\n")
//   line      = "— " ‖ key name ‖ " " ‖ base64(key ID ‖ signature) ‖ "\n"
//   key ID    = SHA-256(key name ‖ "\n" ‖ type ‖ public key)[0:4]
//   vkey      = key name ‖ "+" ‖ hex(key ID) ‖ "+" ‖ base64(type ‖ public key)
//   Ed25519 (type 0x01) signs the text; a cosignature (type 0x04) signs
//   "cosignature/v1\ntime " ‖ decimal T ‖ "\n" ‖ text and its signature is
//   T as u64 big-endian ‖ the Ed25519 signature.
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { concatBytes, utf8ToBytes } from '@noble/hashes/utils.js';

export const SIG_ED25519 = 0x01;
export const SIG_COSIGNATURE_V1 = 0x04;
/** Bounds what a peer can make this parse: a checkpoint with a hundred witnesses fits well within. */
export const MAX_NOTE_BYTES = 32_768;
/** x/mod's note refuses more signature lines, so no valid note has more. */
export const MAX_SIGNATURES = 100;

export type KeyType = typeof SIG_ED25519 | typeof SIG_COSIGNATURE_V1;

export interface NoteSignature {
  name: string;
  keyId: number;
  /** The bytes after the key ID. */
  signature: Uint8Array;
}

export interface SignedNote {
  /** Everything the signatures cover, its final newline included. */
  text: string;
  signatures: NoteSignature[];
}

export interface VerifierKey {
  name: string;
  keyId: number;
  type: KeyType;
  publicKey: Uint8Array;
}

const B64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** Standard base64 with padding, canonical only (undefined otherwise): one value, one encoding. */
export function fromBase64(s: string): Uint8Array | undefined {
  if (!B64.test(s)) return undefined;
  const bytes = Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  return toBase64(bytes) === s ? bytes : undefined;
}

/** A lone UTF-16 surrogate: the string has no UTF-8 encoding. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A key name: not empty, no whitespace, no "+" (it separates a vkey's fields). */
export function isValidKeyName(name: string): boolean {
  return name.length > 0 && !LONE_SURROGATE.test(name) && !/[\s\u0085+]/u.test(name);
}

export function keyId(name: string, type: KeyType, publicKey: Uint8Array): number {
  const h = sha256(concatBytes(utf8ToBytes(`${name}\n`), Uint8Array.of(type), publicKey));
  return new DataView(h.buffer, h.byteOffset).getUint32(0);
}

export function formatVerifierKey(name: string, type: KeyType, publicKey: Uint8Array): string {
  const id = keyId(name, type, publicKey).toString(16).padStart(8, '0');
  return `${name}+${id}+${toBase64(concatBytes(Uint8Array.of(type), publicKey))}`;
}

/** Parses a vkey of an Ed25519 or cosignature key; throws saying what is wrong. */
export function parseVerifierKey(vkey: string): VerifierKey {
  const m = /^([^+]+)\+([0-9a-fA-F]{8})\+(\S+)$/.exec(vkey.trim());
  if (!m || !isValidKeyName(m[1])) throw new Error(`not a verifier key (NAME+KEYID+BASE64): ${vkey.slice(0, 200)}`);
  const key = fromBase64(m[3]);
  if (!key || key.length !== 33) throw new Error(`verifier key ${m[1]}: the key is not 33 bytes of base64`);
  const type = key[0];
  if (type !== SIG_ED25519 && type !== SIG_COSIGNATURE_V1)
    throw new Error(`verifier key ${m[1]}: type ${type} is neither Ed25519 (1) nor a cosignature (4)`);
  const publicKey = key.slice(1);
  const id = keyId(m[1], type, publicKey);
  if (id !== parseInt(m[2], 16)) throw new Error(`verifier key ${m[1]}: its key ID does not match the key`);
  return { name: m[1], keyId: id, type, publicKey };
}

/** Splits a signed note; throws on anything c2sp.org/signed-note does not allow. */
export function parseNote(note: string): SignedNote {
  const bad = (why: string): never => {
    throw new Error(`malformed signed note: ${why}`);
  };
  if (utf8ToBytes(note).length > MAX_NOTE_BYTES) bad(`longer than ${MAX_NOTE_BYTES} bytes`);
  // eslint-disable-next-line no-control-regex
  if (LONE_SURROGATE.test(note) || /[\u0000-\u0009\u000b-\u001f]/.test(note))
    bad('a control character or invalid text');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) bad('no blank line before the signatures');
  const text = note.slice(0, split + 1);
  const block = note.slice(split + 2);
  if (block === '' || !block.endsWith('\n')) bad('no signature lines');
  const lines = block.slice(0, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) bad(`more than ${MAX_SIGNATURES} signatures`);
  const signatures = lines.map((line) => {
    const m = /^\u2014 (\S+) (\S+)$/u.exec(line);
    const raw = m ? fromBase64(m[2]) : undefined;
    if (!m || !isValidKeyName(m[1]) || !raw || raw.length < 5) return bad(`bad signature line: ${line.slice(0, 120)}`);
    return {
      name: m[1],
      keyId: new DataView(raw.buffer).getUint32(0),
      signature: raw.slice(4),
    };
  });
  return { text, signatures };
}

export function signatureLine(name: string, id: number, signature: Uint8Array): string {
  const idBytes = new Uint8Array(4);
  new DataView(idBytes.buffer).setUint32(0, id);
  return `\u2014 ${name} ${toBase64(concatBytes(idBytes, signature))}\n`;
}

export function formatNote(n: SignedNote): string {
  return `${n.text}\n${n.signatures.map((s) => signatureLine(s.name, s.keyId, s.signature)).join('')}`;
}

/** The signature line of an Ed25519 key (32-byte seed) named `name` over `text`. */
export function signEd25519(text: string, name: string, seed: Uint8Array): NoteSignature {
  const pub = ed25519.getPublicKey(seed);
  return { name, keyId: keyId(name, SIG_ED25519, pub), signature: ed25519.sign(utf8ToBytes(text), seed) };
}

const signedBy = (n: SignedNote, k: VerifierKey): NoteSignature[] =>
  n.signatures.filter((s) => s.name === k.name && s.keyId === k.keyId);

function ed25519Verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return ed25519.verify(signature, message, publicKey);
  } catch {
    return false; // a malformed key or signature is a bad signature, not a crash
  }
}

/** Whether the note carries this Ed25519 key's signature and every line of that key verifies. */
export function verifyEd25519(n: SignedNote, k: VerifierKey): boolean {
  if (k.type !== SIG_ED25519) return false;
  const sigs = signedBy(n, k);
  const text = utf8ToBytes(n.text);
  return sigs.length > 0 && sigs.every((s) => ed25519Verify(s.signature, text, k.publicKey));
}

export function cosignatureMessage(text: string, time: number): Uint8Array {
  return utf8ToBytes(`cosignature/v1\ntime ${time}\n${text}`);
}

/**
 * The time (Unix seconds) of this witness's valid cosignature on the note, or
 * undefined when it has none or an invalid one.
 */
export function verifyCosignature(n: SignedNote, k: VerifierKey): number | undefined {
  if (k.type !== SIG_COSIGNATURE_V1) return undefined;
  let time: number | undefined;
  for (const s of signedBy(n, k)) {
    if (s.signature.length !== 8 + 64) return undefined;
    const t = new DataView(s.signature.buffer, s.signature.byteOffset).getBigUint64(0);
    if (t > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
    if (!ed25519Verify(s.signature.subarray(8), cosignatureMessage(n.text, Number(t)), k.publicKey)) return undefined;
    time = Math.max(time ?? 0, Number(t));
  }
  return time;
}

/** Short form of a key for messages: its name and key ID. */
export const describeKey = (k: VerifierKey): string => `${k.name} (key ID ${k.keyId.toString(16).padStart(8, '0')})`;
