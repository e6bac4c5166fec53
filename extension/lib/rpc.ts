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

export async function ask<T>(req: Request): Promise<T> {
  const reply = (await browser.runtime.sendMessage(req)) as Reply<T> | undefined;
  if (!reply)
    throw new RpcError('The add-on did not answer. Reload this page; if that does not help, restart the browser.');
  if (!reply.ok) throw new RpcError(reply.error, reply.code, reply.detail);
  return reply.value;
}
