// Every supported webmail, first match wins.
import type { WebmailAdapter } from './adapter.js';
import { demoWebmail } from './demo-webmail.js';
import { roundcube } from './roundcube.js';

export const adapters: WebmailAdapter[] = [demoWebmail, roundcube];

export function adapterFor(doc: Document): WebmailAdapter | undefined {
  return adapters.find((a) => a.matches(doc));
}
