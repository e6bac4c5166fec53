// A failure of one message's own: its content could not be read into what a
// request is made of (features, blocklist items). Any sender chooses that
// content, so such a failure must never stop the run for the messages after
// it: the runner (runner.ts) tries the message again, then records it as
// failed with this reason and goes on. Everything after that step no longer
// depends on the content (fixed sizes, admissible features), so an error
// there is the run's, as before.
export class MessageFailure extends Error {
  constructor(readonly reason: unknown) {
    super(reason instanceof Error ? reason.message : String(reason));
    this.name = 'MessageFailure';
  }
}

/** Runs the content-dependent step of a request; whatever it throws is the message's failure. */
export async function fromMessage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw new MessageFailure(e);
  }
}
