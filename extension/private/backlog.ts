// Checks a mailbox's unchecked messages for spam, a few at a time, with
// progress, pause and resume. Each message is offered through the usual path
// (fetched, decrypted by the background, which queues it for the worker); it
// counts as done when its final badge arrives. A message whose answer never
// comes (the background was restarted and forgot its queue) is offered once
// more: the worker answers a message it already settled from IndexedDB, so
// nothing is classified twice. No browser API here, so it is unit-tested.

/** Why a message was not offered ('checked': it has an outcome already). */
export type Skip = 'locked' | 'not-encrypted' | 'unreadable' | 'checked';

/**
 * A message to check: a webmail page's URL, or anything else named by an
 * `href` (Thunderbird's new mail, thunderbird/spam-check.ts).
 */
export interface BacklogItem {
  readonly href: string;
}

export interface BacklogDeps<L extends BacklogItem = URL> {
  /** Fetches, decrypts and offers one message; its source id once offered, or why not. */
  offer(link: L): Promise<{ sourceId: string } | { skip: Skip }>;
}

export interface BacklogProgress {
  total: number;
  /** Settled or skipped. */
  done: number;
  checked: number;
  skipped: number;
  /** Offered twice and still no answer. */
  unanswered: number;
  state: 'running' | 'paused' | 'locked' | 'done';
  /**
   * Time left at the pace so far (running time per message done, paused
   * time not counted), once ESTIMATE_AFTER messages are done; none before.
   */
  etaMs?: number;
}

/** Messages done before the pace says anything about the rest. */
export const ESTIMATE_AFTER = 3;

export interface BacklogOptions {
  /** Messages offered but not yet answered, at most: a batch for the worker, without flooding the background. */
  window?: number;
  /** How long to wait for one message's answer before offering it again. */
  answerMs?: number;
  now?: () => number;
}

interface InFlight<L> {
  link: L;
  tries: number;
  timer: ReturnType<typeof setTimeout>;
}

export class BacklogRun<L extends BacklogItem = URL> {
  private next = 0;
  private readonly inFlight = new Map<string, InFlight<L>>();
  /** Answers that arrived before their offer returned (a verdict stored meanwhile). */
  private readonly early = new Set<string>();
  private readonly progress: BacklogProgress;
  private paused = false;
  private running = false;
  private wake: () => void = () => {};
  private readonly window: number;
  private readonly answerMs: number;
  private readonly now: () => number;
  /** Running time before the current run, and when the current run started (undefined: not running). */
  private ranMs = 0;
  private since: number | undefined;

  private readonly links: L[];

  constructor(
    links: L[],
    private readonly deps: BacklogDeps<L>,
    private readonly onProgress: (p: BacklogProgress) => void,
    opts: BacklogOptions = {},
  ) {
    this.links = [...new Map(links.map((l) => [l.href, l])).values()];
    this.window = opts.window ?? 8;
    this.answerMs = opts.answerMs ?? 60_000;
    this.now = opts.now ?? Date.now;
    this.progress = { total: this.links.length, done: 0, checked: 0, skipped: 0, unanswered: 0, state: 'running' };
  }

  /** Runs until every message is settled, or until paused (resume() continues). */
  async start(): Promise<void> {
    this.paused = false;
    this.report('running');
    if (this.running) return; // resumed before the paused loop noticed: it carries on
    this.running = true;
    try {
      while (!this.paused && (this.next < this.links.length || this.inFlight.size > 0)) {
        if (this.next < this.links.length && this.inFlight.size < this.window)
          await this.offer(this.links[this.next++]);
        else await new Promise<void>((r) => (this.wake = r));
      }
    } finally {
      this.running = false;
    }
    if (!this.paused) this.report('done');
  }

  /** Stops offering more; the messages already offered still settle. */
  pause(): void {
    this.paused = true;
    this.wake();
    this.report('paused');
  }

  resume(): Promise<void> {
    return this.start();
  }

  /** The final badge for `sourceId` arrived (any outcome but "checking"). */
  settled(sourceId: string): void {
    const f = this.inFlight.get(sourceId);
    if (!f) return void this.early.add(sourceId);
    clearTimeout(f.timer);
    this.inFlight.delete(sourceId);
    this.progress.checked++;
    this.count();
  }

  private async offer(link: L, tries = 1): Promise<void> {
    let r: Awaited<ReturnType<BacklogDeps<L>['offer']>>;
    try {
      r = await this.deps.offer(link);
    } catch {
      r = { skip: 'unreadable' };
    }
    if ('skip' in r) {
      this.progress.skipped++;
      this.count();
      // A locked key makes the rest pointless: stop here, resume after unlocking.
      if (r.skip === 'locked') {
        this.paused = true;
        this.report('locked');
      }
      return;
    }
    const timer = setTimeout(() => this.unanswered(r.sourceId), this.answerMs);
    this.inFlight.set(r.sourceId, { link, tries, timer });
    if (this.early.delete(r.sourceId)) this.settled(r.sourceId);
  }

  private unanswered(sourceId: string): void {
    const f = this.inFlight.get(sourceId);
    if (!f) return;
    this.inFlight.delete(sourceId);
    if (f.tries < 2) {
      void this.offer(f.link, f.tries + 1).then(() => this.wake());
      return;
    }
    this.progress.unanswered++;
    this.count();
  }

  private count(): void {
    this.progress.done = this.progress.checked + this.progress.skipped + this.progress.unanswered;
    this.report(this.progress.state);
    this.wake();
  }

  private report(state: BacklogProgress['state']): void {
    const t = this.now();
    if (this.since !== undefined) this.ranMs += t - this.since;
    this.since = state === 'running' ? t : undefined;
    this.progress.state = state;
    const { done, total } = this.progress;
    if (state === 'running' && done >= ESTIMATE_AFTER)
      this.progress.etaMs = Math.round((this.ranMs / done) * (total - done));
    else delete this.progress.etaMs;
    this.onProgress({ ...this.progress });
  }
}
