// Email -> feature vector (rows sorted ascending, capped counts). This module
// and everything it imports run unchanged in the extension and in Node;
// MIME parsing is the shared mail/ module's.
import { tokenRow } from './hash.js';
import { parseMessage, type WarningSink } from '../../mail/mime.js';
import { countCap, type FeatureSpec } from './spec.js';
import { tokens } from './tokenize.js';

export interface Features {
  /** Sorted, unique, in 1..N. Row 0 (bias) is implicit and not included. */
  rows: Uint32Array;
  /** Per row: count capped at 2^fIn - 1, or 1 for boolean specs. */
  counts: Uint32Array;
}

/**
 * Maps tokens to capped row counts. Tokens hashing to one row add up. When an
 * email has more than lMax distinct rows, the rows first seen earliest in the
 * message (headers, then body) are kept, so the result never exceeds L.
 */
export function featuresFromTokens(tokens: Iterable<string>, spec: FeatureSpec): Features {
  const tokenCounts = new Map<string, number>();
  for (const t of tokens) tokenCounts.set(t, (tokenCounts.get(t) ?? 0) + 1);
  const rowCounts = new Map<number, number>();
  for (const [t, c] of tokenCounts) {
    const row = tokenRow(t, spec.N);
    const prev = rowCounts.get(row);
    if (prev !== undefined) rowCounts.set(row, prev + c);
    else if (rowCounts.size < spec.lMax) rowCounts.set(row, c);
  }
  const rows = Uint32Array.from(rowCounts.keys()).sort();
  const cap = countCap(spec);
  const counts = rows.map((r) => Math.min(rowCounts.get(r)!, cap));
  return { rows, counts };
}

/** Features of a raw RFC 822 message. Never throws on malformed MIME; what it cannot read well goes to onWarning. */
export async function extractFeatures(
  raw: string | Uint8Array,
  spec: FeatureSpec,
  onWarning?: WarningSink,
): Promise<Features> {
  return featuresFromTokens(tokens(await parseMessage(raw, onWarning)), spec);
}
