// What the add-on says about one message shown in Thunderbird: made by
// displayed-message.ts in the background, shown by the banner in the message
// pane, the "OpenPGP status" popup and the toolbar button (report-view.ts).
import type { DecryptResult } from '../lib/decrypt.js';

export interface DisplayedMessageReport {
  subject: string;
  from: string;
  /**
   * extension: decrypted (or verified) with the extension's keys;
   * thunderbird: decrypted by Thunderbird's OpenPGP; plain: not OpenPGP at all;
   * none: OpenPGP that neither could read (result says why).
   */
  path: 'extension' | 'thunderbird' | 'plain' | 'none';
  /** The extension's own outcome, when the message is OpenPGP. */
  result?: DecryptResult;
  /** Decrypted text, from whichever path decrypted it. */
  text?: string;
  summary: string;
  /**
   * The OpenPGP block is only part of the message (not a PGP/MIME root, nor the whole body of an
   * inline message): the verdict covers `text` and nothing else the message shows.
   */
  partial?: boolean;
  /** Thunderbird reported a decryption with nothing in it: the message is damaged (red, whatever the add-on said). */
  damaged?: boolean;
  /** The subject in the message list, when the real one is hidden inside the encryption ("..."). */
  listedSubject?: string;
  /** What the private spam check found, in sentences (why it is in Junk); absent when it was not checked. */
  spam?: string[];
  /** Attachments the add-on decrypted (Thunderbird shows none of a message it could not decrypt). */
  attachments?: { name: string; type: string; size: number }[];
}
