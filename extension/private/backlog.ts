// Checks a mailbox's unchecked messages for spam, a few at a time, with
// progress, pause and resume. Each message is offered through the usual path
// (fetched, decrypted by the background, which queues it for the worker); it
// counts as done when its final badge arrives. A message whose answer never
// comes (the background was restarted and forgot its queue) is offered once
// more: the worker answers a message it already settled from IndexedDB, so
// nothing is classified twice. A message the background says is waiting for
// the provider (down, or pacing the check to its rate limit) is still in
// flight: the run says so, with the time left at the pace of the last
// answers, instead of looking stuck. No browser API here, so it is unit-tested.

/** Why a message was not offered ('checked': it has an outcome already; 'off': not connected, or the check is off). */
export type Skip = 'locked' | 'not-encrypted' | 'unreadable' | 'checked' | 'off';

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
  /** waiting: the provider cannot be reached; the messages in flight are checked when it answers again. */
  state: 'running' | 'waiting' | 'paused' | 'locked' | 'done';
  /** The provider paces the check (its rate limit): answers come slowly, and `leftMs` says for how long. */
  paced?: boolean;
  /** About how long the rest takes at the pace of the last answers; known after a few answers. */
  leftMs?: number;
}

export interface BacklogOptions {
  /** Messages offered but not yet answered, at most: a batch for the worker, without flooding the background. */
  window?: number;
  /** How long to wait for one message's answer before offering it again. */
  answerMs?: number;
  /** How long a message waiting for the provider may go without news before it is offered again. */
  waitMs?: number;
  now?: () => number;
}

/** The pace of this many last answers estimates the time left. */
const PACE_WINDOW = 10;

interface InFlight<L> {
  link: L;
  tries: number;
  timer: ReturnType<typeof setTimeout>;
}

export class BacklogRun<L extends BacklogItem = URL> {
  private next = 0;
  private readonly inFlight = new Map<string, InFlight<L>>();
  /** In flight, and the background said they wait for the provider. */
  private readonly waitingIds = new Set<string>();
  /** Answers that arrived before their offer returned (a verdict stored meanwhile). */
  private readonly early = new Set<string>();
  private readonly progress: BacklogProgress;
  private paused = false;
  private running = false;
  private wake: () => void = () => {};
  private readonly window: number;
  private readonly answerMs: number;
  private readonly waitMs: number;
  private readonly now: () => number;
  /** When the last answers came, oldest first. */
  private readonly answeredAt: number[] = [];

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
    this.waitMs = opts.waitMs ?? 5 * 60_000;
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

  /** The final badge for `sourceId` arrived (an outcome, not "checking" or "waiting"). */
  settled(sourceId: string): void {
    const f = this.inFlight.get(sourceId);
    if (!f) return void this.early.add(sourceId);
    clearTimeout(f.timer);
    this.inFlight.delete(sourceId);
    this.waitingIds.delete(sourceId);
    this.progress.checked++;
    this.answeredAt.push(this.now());
    if (this.answeredAt.length > PACE_WINDOW) this.answeredAt.shift();
    if (this.progress.state === 'waiting') this.progress.state = 'running'; // the provider answers again
    this.count();
  }

  /**
   * `sourceId` waits for the provider: `unreachable` (it is down; the
   * background tries again later) or `paced` (its rate limit sets the pace).
   * Still in flight; offered again only after waitMs without news.
   */
  waiting(sourceId: string, why: 'unreachable' | 'paced'): void {
    const f = this.inFlight.get(sourceId);
    if (!f) return;
    clearTimeout(f.timer);
    this.waitingIds.add(sourceId);
    // News from the background: it holds the message, so an answer may be lost only with a restart.
    f.tries = 1;
    f.timer = setTimeout(() => this.unanswered(sourceId), this.waitMs);
    if (why === 'paced') this.progress.paced = true;
    else if (this.progress.state === 'running') this.progress.state = 'waiting';
    this.report(this.progress.state);
  }

  /**
   * The provider answers again: the messages waiting for it are offered
   * again now (a background restarted meanwhile no longer holds them; one
   * that does answers them once).
   */
  retryWaiting(): void {
    for (const sourceId of this.waitingIds) {
      const f = this.inFlight.get(sourceId);
      if (!f) continue;
      clearTimeout(f.timer);
      this.inFlight.delete(sourceId);
      void this.offer(f.link, 1).then(() => this.wake());
    }
    this.waitingIds.clear();
    if (this.progress.state === 'waiting') this.report('running');
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
    const a = this.answeredAt;
    const left = this.progress.total - this.progress.done;
    if (a.length >= 3 && left > 0)
      this.progress.leftMs = Math.round(((a[a.length - 1] - a[0]) / (a.length - 1)) * left);
    else delete this.progress.leftMs;
    this.report(this.progress.state);
    this.wake();
  }

  private report(state: BacklogProgress['state']): void {
    this.progress.state = state;
    this.onProgress({ ...this.progress });
  }
}
