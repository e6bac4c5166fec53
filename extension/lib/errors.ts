// Errors shown to the user: a stable code for the UI and tests, and a message
// that never contains key material or message content.

export type KeyErrorCode =
  | 'bad-input'
  | 'weak-passphrase'
  | 'malformed'
  | 'too-large'
  | 'wrong-passphrase'
  | 'no-private'
  | 'not-found'
  | 'storage';

export class KeyError extends Error {
  constructor(
    readonly code: KeyErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'KeyError';
  }
}

/** Turns an IndexedDB failure into a sentence, naming a full disk plainly. */
export function describeStorageError(e: unknown, what: string): string {
  const name = (e as { name?: string } | undefined)?.name;
  if (name === 'QuotaExceededError')
    return `${what}: browser storage is full. Nothing was changed; free some space and retry.`;
  return `${what}: storage error (${name ?? 'unknown'}). Nothing was changed.`;
}
