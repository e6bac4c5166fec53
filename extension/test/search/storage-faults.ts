// What the search tests that break IndexedDB share: a put that fails as a
// full disk would, and the MailSearchError a caller must then get.
import assert from 'node:assert/strict';
import { MailSearchError } from '../../search/index.js';

/** Rejects with a MailSearchError of `code` (and a message matching `pattern`). */
export const rejectsWith = (p: Promise<unknown>, code: string, pattern?: RegExp) =>
  assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof MailSearchError, `expected MailSearchError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (pattern) assert.match(err.message, pattern);
    return true;
  });

/** Makes the nth put (1-based) from now fail as a full disk would, once; returns the undo. */
export function failNthPut(nth: number): () => void {
  const proto = globalThis.IDBObjectStore.prototype;
  const original = proto.put;
  let calls = 0;
  proto.put = function (this: IDBObjectStore, ...args: Parameters<IDBObjectStore['put']>) {
    if (++calls === nth) throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
    return original.apply(this, args);
  };
  return () => {
    proto.put = original;
  };
}
