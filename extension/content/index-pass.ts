// One pass of "Index mailbox" over a listing's messages: reads (decrypts and
// indexes) them in order and counts the outcomes. A pause stops it between
// two messages; calling it again with the same pass goes on from there.
import type { BadgeInfo } from '../lib/messages.js';
import { toPlain } from '../lib/plain-error.js';

export type Tally = Record<'indexed' | 'locked' | 'other-key' | 'damaged' | 'unread' | 'plain', number> & {
  /** Why messages could not be read, in plain words (usually one reason). */
  reasons: Set<string>;
};

/** One pass over the listed messages, which a pause interrupts. */
export interface Pass {
  /** Index of the next message to read. */
  next: number;
  tally: Tally;
}

export const newPass = (): Pass => ({
  next: 0,
  tally: { indexed: 0, locked: 0, 'other-key': 0, damaged: 0, unread: 0, plain: 0, reasons: new Set() },
});

/** Reads the listed messages from `pass.next` on, until the end, a locked key or a pause. */
export async function indexFrom(
  links: readonly URL[],
  read: (link: URL) => Promise<{ info: BadgeInfo } | undefined>,
  pass: Pass,
  paused: () => boolean,
  onProgress: (done: number) => void,
): Promise<void> {
  const { tally } = pass;
  while (pass.next < links.length && !paused()) {
    try {
      const listed = await read(links[pass.next]);
      if (!listed) tally.plain++;
      else {
        const { info } = listed;
        if (info.status === 'decrypted') tally.indexed++;
        else if (info.status === 'locked') tally.locked++;
        else if (info.status === 'not-for-this-key') tally['other-key']++;
        else if (info.status === 'verified-only') tally.plain++;
        else tally.damaged++;
      }
    } catch (e) {
      tally.unread++;
      tally.reasons.add(toPlain(e).message);
    }
    onProgress(++pass.next);
    // A locked key makes the rest pointless: say so now.
    if (tally.locked) break;
  }
}
