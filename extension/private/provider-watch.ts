// In the background: follows the provider's health (provider-health.ts) as
// batches fail and succeed, and brings the check back when the provider
// does. A failed batch sets the next try (an alarm, so a stopped background
// is woken for it); at that time the messages kept for the provider go to
// the worker again, or, with none kept (the background was restarted
// meanwhile), the provider is asked whether it is back (a session opened and
// closed). Once it answers, the mail that waited is looked at again: the
// webmail tabs offer their unchecked mail, Thunderbird scans its folders.
// Browser APIs are injected, so it is unit-tested.
import { afterFailure, RETRY_ALARM, type ProviderHealth } from './provider-health.js';
import type { PrivateStore } from './store.js';
import type { WorkerFailure } from './worker-protocol.js';

export interface WatchDeps {
  store(): Promise<PrivateStore>;
  /** Hands the messages kept for the provider to the worker again; false when none were kept. */
  retryKept(): boolean;
  /** Opens (and closes) a session with the provider: resolves when it answers, rejects with the worker's failure. */
  probe(): Promise<void>;
  failureOf(e: unknown): WorkerFailure;
  /** The provider answers (again): look at the mail that waited for it. */
  ready(): void;
  /** The health changed: pages showing the status refresh. */
  changed(): void;
  alarms: { create(name: string, info: { when: number }): void; clear(name: string): Promise<unknown> };
  now?: () => number;
}

export class ProviderWatch {
  /** The stored health, read once and then kept here (every outcome asks). */
  private known: Promise<ProviderHealth | undefined> | undefined;

  constructor(private readonly deps: WatchDeps) {}

  private async set(h: ProviderHealth | undefined): Promise<void> {
    this.known = Promise.resolve(h);
    await (await this.deps.store()).setHealth(h);
    if (h?.state === 'waiting') this.deps.alarms.create(RETRY_ALARM, { when: h.retryAt });
    else await this.deps.alarms.clear(RETRY_ALARM);
    this.deps.changed();
  }

  health(): Promise<ProviderHealth | undefined> {
    return (this.known ??= this.deps.store().then((s) => s.health()));
  }

  /** A batch (or a probe) failed: waiting for the provider (next try set) or refused; other failures change nothing. */
  async failed(f: WorkerFailure): Promise<void> {
    const before = await this.health();
    const after = afterFailure(before, f, (this.deps.now ?? Date.now)());
    if (after !== before) await this.set(after);
  }

  /** The provider answered a message: it is healthy; if it had not been, the mail that waited is looked at. */
  async answered(): Promise<void> {
    if (!(await this.health())) return;
    await this.set(undefined);
    this.deps.ready();
  }

  /** Connected or disconnected: a new connection starts healthy (PrivateStore.setProvider cleared it). */
  forget(): void {
    this.known = Promise.resolve(undefined);
    void this.deps.alarms.clear(RETRY_ALARM);
  }

  /** The retry alarm fired (or the user asked to try now). */
  async retry(): Promise<void> {
    if ((await this.health())?.state !== 'waiting') return;
    if (this.deps.retryKept()) return; // their outcomes or failures say how it went
    try {
      await this.deps.probe();
    } catch (e) {
      return this.failed(this.deps.failureOf(e));
    }
    await this.answered();
  }
}
