// One error type for every failure of the local search index, with a code a
// caller can branch on. Messages never contain mail content or key material.

export type MailSearchErrorCode =
  | 'bad-input' // a document or argument failed validation; nothing was written
  | 'no-key' // neither a key nor a passphrase was supplied
  | 'wrong-key' // the key/passphrase does not open this index
  | 'integrity' // a stored record failed authentication or is malformed
  | 'quota' // the browser refused the write for lack of space; nothing was written
  | 'storage' // any other IndexedDB failure; nothing was written
  | 'closed'; // the index was used after close()

export class MailSearchError extends Error {
  override readonly name = 'MailSearchError';
  constructor(
    readonly code: MailSearchErrorCode,
    message: string,
  ) {
    super(message);
  }
}
