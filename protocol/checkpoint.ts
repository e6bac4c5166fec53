// C2SP checkpoints (c2sp.org/tlog-checkpoint): the text of a signed note that
// names a log (its origin), a tree size and the RFC 6962 root of that tree.
//   origin "\n" decimal size "\n" base64(root) "\n" (extension line "\n")*
import { HASH_BYTES } from './merkle.js';
import { fromBase64, toBase64 } from './signed-note.js';

export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
  /** Optional lines after the root, each non-empty (the package log writes none). */
  extensions: string[];
}

export function formatCheckpoint(c: Checkpoint): string {
  return [c.origin, String(c.size), toBase64(c.root), ...c.extensions].map((l) => `${l}\n`).join('');
}

/** Parses a checkpoint; throws saying what is wrong. Sizes past 2^53 − 1 are refused (no log here gets near). */
export function parseCheckpoint(text: string): Checkpoint {
  const bad = (why: string): never => {
    throw new Error(`malformed checkpoint: ${why}`);
  };
  if (!text.endsWith('\n')) bad('it does not end in a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) bad('fewer than three lines');
  const [origin, size, root, ...extensions] = lines;
  if (origin === '') bad('empty origin');
  if (!/^(0|[1-9][0-9]{0,15})$/.test(size) || !Number.isSafeInteger(Number(size))) bad(`bad tree size ${size}`);
  const hash = fromBase64(root);
  if (!hash || hash.length !== HASH_BYTES) bad('the root is not 32 bytes of base64');
  if (extensions.some((l) => l === '')) bad('an empty extension line');
  return { origin, size: Number(size), root: hash!, extensions };
}
