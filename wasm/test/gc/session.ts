// A client/provider OT session wired back to back, for the GC/OT tests.
import { loadCore, type WasmCore } from '../../ts/core.js';
import { argmaxChoice, evaluateArgmax, garbleArgmax } from '../../ts/gc.js';
import { OtReceiver, OtSender } from '../../ts/ot.js';
import { rand, signed } from './reference.js';

export interface Session {
  core: WasmCore;
  client: OtReceiver;
  provider: OtSender;
  /** Every message the client sent, in order (for structural checks). */
  clientToProvider: Uint8Array[];
}

/** The session-binding context both test parties pass (any equal bytes will do). */
export const SESSION_ID = new TextEncoder().encode('test-session');

export async function openSession(pool = 4096): Promise<Session> {
  const core = await loadCore();
  const client = new OtReceiver(core, SESSION_ID);
  const provider = new OtSender(core, SESSION_ID);
  const clientToProvider: Uint8Array[] = [];
  const a = client.start();
  clientToProvider.push(a);
  client.finish(provider.respond(a));
  const ext = client.extend(pool);
  clientToProvider.push(ext);
  provider.acceptExtension(ext);
  return { core, client, provider, clientToProvider };
}

/** Tops both pools up when fewer than n OTs remain. */
export function ensurePool(s: Session, n: number): void {
  if (s.client.available < n) s.provider.acceptExtension(s.client.extend(Math.max(n, 4096)));
}

/**
 * One topic argmax over n random T-bit scores with K-bit indices, garbled and evaluated
 * over the session; `expected` is the index plaintext arithmetic picks (first maximum wins).
 */
export function randomArgmax(s: Session, T: number, n: number, K: number) {
  const ys = Array.from({ length: n }, () => rand(T));
  const rPrimes = Array.from({ length: n }, () => rand(T));
  const indices = Array.from({ length: n }, () => rand(K));
  ensurePool(s, n * (T + K));
  const { message, pending } = argmaxChoice(s.client, { rPrimes, indices, T, indexBits: K });
  const { message: gc, decoder } = garbleArgmax({ ys, T, indexBits: K }, s.provider, message);
  const labels = evaluateArgmax(pending, gc);
  const v = ys.map((y, j) => signed((y + rPrimes[j]) % 2 ** T, T));
  let best = 0;
  for (let j = 1; j < n; j++) if (v[j] > v[best]) best = j;
  return { decoder, labels, expected: indices[best], choice: message, gc };
}
