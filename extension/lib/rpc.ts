// Typed request to the background, unwrapping its Reply.
import browser from 'webextension-polyfill';
import type { Reply, Request } from './messages.js';

export class RpcError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

export async function ask<T>(req: Request): Promise<T> {
  const reply = (await browser.runtime.sendMessage(req)) as Reply<T> | undefined;
  if (!reply) throw new RpcError('The extension background did not answer.');
  if (!reply.ok) throw new RpcError(reply.error, reply.code);
  return reply.value;
}
