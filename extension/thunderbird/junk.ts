// Thunderbird: acting on a private spam verdict. Spam is flagged junk
// (messages.update) and, when the user lets the extension move spam, moved to
// the Junk folder of the account it arrived in; "not spam" clears the flag
// and moves it back to that account's Inbox. On an IMAP account the move is
// the server's, so the provider learns the verdict: with moving off only the
// flag is set (Thunderbird's own junk filter learns from it, on this device).
import type { FolderUse, MessageHeader, ThunderbirdApi } from './api.js';

/** What was done: flagged and moved, flagged only (no such folder, or moving is off), or already there. */
export type JunkAction = 'moved' | 'flagged' | 'in-place';

export async function applySpamVerdict(
  api: ThunderbirdApi,
  message: MessageHeader,
  spam: boolean,
  opts: { move: boolean },
): Promise<JunkAction> {
  await api.messages.update(message.id, { junk: spam });
  const use: FolderUse = spam ? 'junk' : 'inbox';
  const from = message.folder;
  if (!opts.move || !from) return 'flagged';
  if (from.specialUse?.includes(use)) return 'in-place';
  // The account's own folder: a message never moves to another account (or the local folders).
  const [to] = await api.folders.query({ accountId: from.accountId, specialUse: [use] });
  if (!to) return 'flagged';
  await api.messages.move([message.id], to.id, { isUserAction: false });
  return 'moved';
}
