// An event page (Firefox, Thunderbird) or service worker (Chromium) is
// stopped after a spell without events (30 s for users), even while a
// request it answers is still being worked on: a pending answer postpones
// that only once. Every call of an extension API starts the spell again, so
// while work that someone waits for runs (a large message being decrypted),
// the background calls a cheap one every few seconds. Bounded: work that
// outlasts AT_MOST_MS no longer keeps it awake. `touch` is that call
// (browser.runtime.getPlatformInfo in the background).

export const EVERY_MS = 2_000;
export const AT_MOST_MS = 10 * 60_000;

export async function keepAwake<T>(work: Promise<T>, touch: () => Promise<unknown>): Promise<T> {
  const started = Date.now();
  const timer = setInterval(() => {
    if (Date.now() - started >= AT_MOST_MS) clearInterval(timer);
    else touch().catch(() => {});
  }, EVERY_MS);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}
