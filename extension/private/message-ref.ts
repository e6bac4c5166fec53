// Which provider message a webmail view is. Only mail the provider delivered
// is offered to it, under the id it knows the message by:
// - the provider's own demo webmail: its page carries the id
//   (MailSource.id is "<origin>/mail#<id>"), on the provider's origin only;
// - a webmail reading the raw message from its server (Roundcube): the id the
//   provider's LMTP stage wrote into X-PMF-Message-Id at delivery (a sender's
//   copy of that header is removed there), as the Thunderbird build reads it.
// Anything else is not offered to the provider at all.
import { PROVIDER_ID } from '../../mail/message-id.js';
import type { MailSource } from '../lib/messages.js';

export function deliveredId(
  source: Pick<MailSource, 'id' | 'url' | 'providerId'>,
  providerUrl: string,
): string | undefined {
  if (source.providerId !== undefined) return PROVIDER_ID.test(source.providerId) ? source.providerId : undefined;
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
