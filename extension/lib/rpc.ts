// Typed request to the background, unwrapping its Reply.
import browser from 'webextension-polyfill';
import type { Reply, Request } from './messages.js';

export class RpcError extends Error {
  constructor(
    message: string,
    readonly code?: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/** Firefox and Thunderbird: the event page stopped between the send and the answer. It wakes for the next one. */
const STOPPED = /Receiving end does not exist/;
const NO_ANSWER = 'The add-on did not answer. Try again; if it keeps happening, restart Thunderbird or your browser.';

export async function ask<T>(req: Request): Promise<T> {
  const send = () => browser.runtime.sendMessage(req) as Promise<Reply<T> | undefined>;
  let reply: Reply<T> | undefined;
  try {
    reply = await send();
  } catch (e) {
    if (!(e instanceof Error && STOPPED.test(e.message))) throw e;
    // Asked once more (the page was stopped, not the request refused); no browser text reaches the user.
    reply = await send().catch((again: unknown) => {
      throw new RpcError(NO_ANSWER, undefined, again instanceof Error ? again.message : String(again));
    });
  }
  if (!reply) throw new RpcError(NO_ANSWER);
  if (!reply.ok) throw new RpcError(reply.error, reply.code, reply.detail);
  return reply.value;
}
