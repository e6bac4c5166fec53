// A session's acknowledgements (spam_done): the recorded answer is dropped
// off the email's path, so the client's next request need not wait for that
// commit (docs/protocol.md#exactly-once-verdicts). Nothing depends on the
// write but a later spam_resend, which waits for it (settled); lost in a
// crash, it leaves only an answer that is pruned or capped later.

/** The acknowledgement a session is writing: at most one at a time. */
export class Acknowledgements {
  private last: Promise<void> = Promise.resolve();

  constructor(private readonly failed: (e: unknown) => void) {}

  /** Starts `write` once the previous one is done; resolves when it started, not when it is written. */
  async start(write: () => Promise<void>): Promise<void> {
    await this.last;
    this.last = write().catch(this.failed);
  }

  /** Resolves once every acknowledgement started so far is written, or failed (and was logged). */
  settled(): Promise<void> {
    return this.last;
  }
}
