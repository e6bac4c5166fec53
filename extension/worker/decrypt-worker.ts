// Dedicated worker that decrypts one large OpenPGP block (lib/decrypt-off-thread.ts):
// openpgp.js and the MIME parser run for seconds on a message of several
// megabytes, and on the background's own thread that time blocks every
// other request and keeps it from staying awake. The worker answers once
// and is then ended by the background, with the key copies it was given.
import * as openpgp from 'openpgp';
import { decryptBlockWithPlaintext } from '../lib/decrypt.js';
import type { OffThreadJob, OffThreadAnswer } from '../lib/decrypt-off-thread.js';

self.onmessage = async ({ data: job }: MessageEvent<OffThreadJob>) => {
  let answer: OffThreadAnswer;
  try {
    const keys = {
      unlocked: await Promise.all(job.unlocked.map((binaryKey) => openpgp.readPrivateKey({ binaryKey }))),
      lockedKeyIds: new Set(job.lockedKeyIds),
      verificationKeys: await Promise.all(job.verificationKeys.map((binaryKey) => openpgp.readKey({ binaryKey }))),
    };
    answer = { opened: await decryptBlockWithPlaintext(job.block, keys, job.from) };
  } catch (e) {
    answer = { error: e instanceof Error ? e.message : String(e) };
  }
  self.postMessage(answer);
};
