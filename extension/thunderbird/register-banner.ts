// Thunderbird: puts the banner (message-banner.ts) into every displayed message.
import type { ThunderbirdApi } from './api.js';

const BANNER = 'pmf-message-banner';

/** Registers the message display script (thunderbird/message-banner.ts) unless it already is. */
export async function showBannerInMessages(api: ThunderbirdApi): Promise<void> {
  const md = api.scripting.messageDisplay;
  if ((await md.getRegisteredScripts({ ids: [BANNER] })).length === 0)
    await md.registerScripts([{ id: BANNER, js: ['tb-banner.js'] }]);
}
