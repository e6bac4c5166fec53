// Which provider message a webmail view is. Only mail shown by the
// provider's own webmail was delivered by it, under the id its pages carry
// (the demo webmail's MailSource.id is "<origin>/mail#<id>"); anything else
// is not offered to the provider at all.
import type { MailSource } from '../lib/messages.js';

export function deliveredId(source: Pick<MailSource, 'id' | 'url'>, providerUrl: string): string | undefined {
  const origin = new URL(providerUrl).origin;
  let pageOrigin: string;
  try {
    pageOrigin = new URL(source.url).origin;
  } catch {
    return undefined;
  }
  const prefix = `${origin}/mail#`;
  if (pageOrigin !== origin || !source.id.startsWith(prefix)) return undefined;
  const id = source.id.slice(prefix.length);
  return id.length > 0 && id.length <= 600 ? id : undefined;
}
