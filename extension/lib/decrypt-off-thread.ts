// Decrypts a large OpenPGP block in a dedicated worker (worker/decrypt-worker.ts)
// where one can be started (Firefox and Thunderbird backgrounds; Chromium's
// service worker cannot, and decrypts on its own thread). The background
// stays free to answer other requests and to keep itself awake meanwhile.
// The worker gets copies of the unlocked keys for this one block and is
// ended when it has answered, so no copy outlives the job. A block asked
// for again while it is being decrypted (a new message is indexed while
// the user opens it) waits for the same work.
import type { KeyContext } from '../../mail/decrypt.js';
import type { PgpBlock } from '../../mail/pgp.js';
import { decryptBlockWithPlaintext } from './decrypt.js';

/** Blocks from this size on are decrypted off the background's thread (small ones are quicker in place). */
export const OFF_THREAD_BYTES = 1024 * 1024;

type Opened = Awaited<ReturnType<typeof decryptBlockWithPlaintext>>;

/** What the background sends: keys as OpenPGP binary packets (structured clone cannot carry openpgp objects). */
export interface OffThreadJob {
  block: PgpBlock;
  from?: string;
  unlocked: Uint8Array[];
  lockedKeyIds: string[];
  verificationKeys: Uint8Array[];
}
export type OffThreadAnswer = { opened: Opened } | { error: string };

/** Blocks being decrypted off the thread, by their armored text. */
const running = new Map<string, { block: PgpBlock; from?: string; opened: Promise<Opened> }>();

export function decryptOffThread(block: PgpBlock, keys: KeyContext, from?: string): Promise<Opened> {
  if (typeof Worker !== 'function' || block.armored.length < OFF_THREAD_BYTES)
    return decryptBlockWithPlaintext(block, keys, from);
  const same = running.get(block.armored);
  if (same && same.from === from && same.block.kind === block.kind && same.block.pgpMime === block.pgpMime)
    return same.opened;
  const entry = { block, from, opened: inWorker(block, keys, from) };
  running.set(block.armored, entry);
  const over = () => void (running.get(block.armored) === entry && running.delete(block.armored));
  entry.opened.then(over, over);
  return entry.opened;
}

function inWorker(block: PgpBlock, keys: KeyContext, from?: string): Promise<Opened> {
  const worker = new Worker(
    /* webpackChunkName: "decrypt-worker" */ new URL('../worker/decrypt-worker.ts', import.meta.url),
  );
  const job: OffThreadJob = {
    block,
    from,
    unlocked: keys.unlocked.map((k) => k.write()),
    lockedKeyIds: [...keys.lockedKeyIds],
    verificationKeys: keys.verificationKeys.map((k) => k.write()),
  };
  return new Promise<Opened>((resolve, reject) => {
    worker.onmessage = ({ data }: MessageEvent<OffThreadAnswer>) =>
      'opened' in data ? resolve(data.opened) : reject(new Error(data.error));
    worker.onerror = (ev) => {
      ev.preventDefault();
      reject(new Error(`the decryption worker stopped: ${ev.message || 'unknown error'}`));
    };
    worker.postMessage(job);
  }).finally(() => worker.terminate());
}
