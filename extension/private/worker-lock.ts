// Work that one worker of the pool (worker-pool.ts) must do alone: Web Locks
// span every worker and page of the extension's origin. Where there are none
// (Node tests, one realm), the work runs as is.

/** Runs `fn` holding the extension-wide lock `name`. */
export function alone<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const locks = (globalThis as { navigator?: { locks?: LockManager } }).navigator?.locks;
  return locks ? (locks.request(name, fn) as Promise<T>) : fn();
}
