// How a failed IndexedDB transaction is told apart, as browsers report it.
// Chromium rejects a transaction's done at the failed request's error event,
// before the abort that sets tx.error: done then says only AbortError. A
// re-indexed message (its id tag already stored, a ConstraintError) must
// still be recognized as one, or its whole batch fails and the next message
// added is lost (seen in e2e/webmail.e2e.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MailSearchError } from '../../search/errors.js';
import { writeAtomically, writeNew, type SearchDb, type WriteOp } from '../../search/store.js';

/** A database whose transactions fail as Chromium's do: the request with `requestError`, done with a bare AbortError. */
function failingDb(requestError: DOMException): SearchDb {
  return {
    transaction: () => {
      const done = Promise.reject(new DOMException('The transaction was aborted.', 'AbortError'));
      done.catch(() => undefined);
      const write = () => Promise.reject(requestError);
      return { objectStore: () => ({ put: write, delete: write }), done, error: null, abort: () => undefined };
    },
  } as unknown as SearchDb;
}

const ops: WriteOp[] = [{ store: 'docs', put: { h: 'tag', c: 1 }, key: 1 }];

test('a stored id tag is told from a failed write though the transaction reports only its abort', async () => {
  const taken = failingDb(
    new DOMException('Unable to add key to index h: uniqueness requirements were not met.', 'ConstraintError'),
  );
  assert.equal(await writeNew(taken, ops), false, 'a replacement: look the tags up and rewrite');
});

test('a full disk is reported as such, not as an abort', async () => {
  const full = failingDb(new DOMException('The quota has been exceeded.', 'QuotaExceededError'));
  await assert.rejects(writeAtomically(full, ops), (e: unknown) => e instanceof MailSearchError && e.code === 'quota');
  await assert.rejects(writeNew(full, ops), (e: unknown) => e instanceof MailSearchError && e.code === 'quota');
});
