// Long synchronous work (a seal's weights and term sort) written as a
// generator that yields between steps, so it can run at once or in slices
// that give the thread back in between: a query that arrives meanwhile is
// answered after the current slice, not after the whole work.

/** Work in steps; its result is the generator's return value. */
export type Steps<T> = Generator<void, T, void>;

/** How long one slice may hold the thread (a few steps of well under a millisecond each). */
export const SLICE_MS = 1;

/** Runs all steps now. */
export function finish<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * A later task: after the I/O callbacks and messages already waiting (in
 * Node setImmediate; elsewhere a message to itself, which, unlike setTimeout,
 * browsers do not delay by 4 ms when nested).
 */
export function nextTask(): Promise<void> {
  const { setImmediate } = globalThis as { setImmediate?: (f: () => void) => void };
  if (setImmediate) return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => {
    const { port1, port2 } = new MessageChannel();
    port1.onmessage = () => {
      port1.close();
      resolve();
    };
    port2.postMessage(null);
  });
}

/** Runs the steps in slices of about SLICE_MS, each in a task of its own. */
export async function inSlices<T>(steps: Steps<T>): Promise<T> {
  let until = performance.now() + SLICE_MS;
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (performance.now() >= until) {
      await nextTask();
      until = performance.now() + SLICE_MS;
    }
  }
}
