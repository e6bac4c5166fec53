// Thunderbird: acting on a private spam verdict. Spam is flagged junk
// (messages.update) and, when the user lets the extension move spam, moved to
// the Junk folder of the account it arrived in; "not spam" clears the flag
// and moves it back to the folder it was taken from (when known) or that
// account's Inbox. On an IMAP account the move is the server's, so the
// provider learns the verdict: with moving off only the flag is set
// (Thunderbird's own junk filter learns from it, on this device).
import type { FolderUse, MessageHeader, ThunderbirdApi } from './api.js';

/** What was done: flagged and moved, flagged only (no such folder, or moving is off), or already there. */
export type JunkAction = 'moved' | 'flagged' | 'in-place';

export async function applySpamVerdict(
  api: ThunderbirdApi,
  message: MessageHeader,
  spam: boolean,
  opts: {
    move: boolean;
    /** "Not spam": the folder (MailFolderId) to put it back in, if it still exists. */ backTo?: string;
  },
): Promise<JunkAction> {
  // Unchanged flags are left alone: each change is reported back (messages.onUpdated) and trains Thunderbird's filter.
  if (message.junk !== spam) await api.messages.update(message.id, { junk: spam });
  const use: FolderUse = spam ? 'junk' : 'inbox';
  const from = message.folder;
  if (!opts.move || !from) return 'flagged';
  if (from.specialUse?.includes(use)) return 'in-place';
  // The account's own folder: a message never moves to another account (or the local folders).
  const back = !spam && opts.backTo;
  const [to] = back
    ? (await api.folders.query({ accountId: from.accountId })).filter((f) => f.id === back)
    : await api.folders.query({ accountId: from.accountId, specialUse: [use] });
  if (!to && back) return applySpamVerdict(api, { ...message, junk: spam }, spam, { move: true });
  if (!to) return 'flagged';
  await api.messages.move([message.id], to.id, { isUserAction: false });
  return 'moved';
}
