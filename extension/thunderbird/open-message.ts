// Thunderbird: search results are Thunderbird messages, found again by their
// Message-ID (the index stores `mid:<Message-ID>`, RFC 2392, as their address)
// and opened in a Thunderbird tab with messageDisplay.open (MV3).
import type { ThunderbirdApi } from './api.js';

const MAX_MESSAGE_ID = 998; // RFC 5322 line length: longer is not a Message-ID

/** The Message-ID a `mid:` result address names, or undefined for any other address. */
export function messageIdOf(url: string | undefined): string | undefined {
  if (!url?.startsWith('mid:')) return undefined;
  const id = url.slice(4);
  return id.length > 0 && id.length <= MAX_MESSAGE_ID && !/[\s<>]/.test(id) ? id : undefined;
}

/** Opens the message in a Thunderbird tab; rejects in plain words when Thunderbird no longer has it. */
export async function openMessage(api: ThunderbirdApi, headerMessageId: string): Promise<void> {
  try {
    await api.messageDisplay.open({ headerMessageId, location: 'tab' });
  } catch {
    throw new Error(
      'Thunderbird could not open this message: it may have been deleted or moved to an account that is gone.',
    );
  }
}
