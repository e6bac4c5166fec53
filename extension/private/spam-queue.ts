// The background's spam-check queue. Each decrypted webmail message the
// provider delivered is offered here; the reply to the page never waits.
// A stored verdict is shown at once; otherwise the message joins the next
// batch for the worker (one session per batch, client/core's runner), and
// each outcome goes to the tabs showing that message. The link check's hits
// (docs/blocklist.md) follow the verdict and are added to its badge; a
// stored verdict whose links were never looked up (a restart in between, the
// check turned on later) is shown at once and still goes to the worker for
// the link check alone. A batch that failed because the provider could not be
// reached (or held the pace back for too long) is kept, its messages shown as
// waiting, and handed to the worker again by retry() (the background calls it
// on its backoff alarm, provider-health.ts). Environment-free
// (storage, worker and notification are injected) so it is unit-tested.
import {
  failureBadge,
  isTransient,
  outcomeBadge,
  withBlocklist,
  CHECKING,
  LOCKED,
  NOT_KEPT,
  PACED,
  PROVIDER_DOWN,
  type SpamBadge,
} from './faults.js';
import { accountOf, type ProviderConfig } from './account.js';
import { type PrivateStore } from './store.js';
import type { ClassifyItem, ItemOutcome, WorkerEvent, WorkerFailure } from './worker-protocol.js';

export interface QueueDeps {
  store(): Promise<PrivateStore>;
  classify(provider: ProviderConfig, items: ClassifyItem[], onEvent: (e: WorkerEvent) => void): Promise<unknown>;
  /**
   * Shows a badge for message `sourceId` in the tab/frame `target`; `fresh`
   * when the provider just answered (only then may the page act on it, so a
   * message the user marked "not spam" is not moved again on its next view).
   */
  notify(target: Target, sourceId: string, badge: SpamBadge, fresh: boolean): void;
  /** The failure of a whole batch (provider down, tampered package…), for the status page. */
  onFailure?(failure: WorkerFailure): void;
  onOutcome?(o: ItemOutcome): void;
  /** The provider refused the token: nothing more is asked until the user connects again. */
  refused?(): Promise<boolean>;
}

export interface Target {
  tabId: number;
  frameId?: number;
}

interface Waiting {
  /** The connection it was offered under: a batch never mixes accounts. */
  provider: ProviderConfig;
  raw: string;
  watchers: { target: Target; sourceId: string }[];
  /** The stored verdict already shown: only the link check is asked for. */
  shown?: SpamBadge;
}

/** Wraps a worker failure for the queue; any other error is a protocol failure. */
export type FailureOf = (e: unknown) => WorkerFailure;

/**
 * Messages kept for a provider that is down, at most (their decrypted text
 * stays in memory meanwhile): past this, a message is shown as not checked
 * and is checked when it is shown again.
 */
export const MAX_HELD = 500;

export class SpamQueue {
  private readonly waiting = new Map<string, Waiting>();
  /** Messages of batches that failed while the provider was down: handed to the worker again by retry(). */
  private readonly held = new Map<string, Waiting>();
  private running: Promise<void> | undefined;
  /**
   * The provider paces the batch being checked (it said 'slowed'): messages offered meanwhile wait
   * behind it, and are shown so (else a long wait looks like no answer at all).
   */
  private paced = false;

  constructor(
    private readonly deps: QueueDeps,
    private readonly failureOf: FailureOf,
  ) {}

  /** Offers one decrypted message; `messageId` is the provider's id for it. */
  async offer(
    provider: ProviderConfig,
    messageId: string,
    raw: string,
    target: Target,
    sourceId: string,
  ): Promise<void> {
    const account = accountOf(provider);
    const store = await this.deps.store();
    const stored = await store.verdict(account, messageId);
    const key = `${account}\n${messageId}`;
    const w = this.waiting.get(key);
    let shown: SpamBadge | undefined;
    if (stored) {
      const links = await store.blocklistOutcome(account, messageId);
      const hits = links?.kind === 'looked-up' ? links.hits : [];
      shown = withBlocklist({ ...outcomeBadge(stored), topicShared: await store.topicShared(messageId) }, hits);
      this.deps.notify(target, sourceId, shown, false);
      const lookUp = !links && stored.kind !== 'unknown_message' && (await store.settings()).linkCheck;
      if (!lookUp) return;
    }
    const kept = this.held.get(key);
    if (kept) {
      // Waits for the provider with the others: shown so, asked with them at the next try.
      kept.watchers.push({ target, sourceId });
      if (!shown) this.deps.notify(target, sourceId, PROVIDER_DOWN, false);
      return;
    }
    if (!shown && (await this.deps.refused?.()))
      return this.deps.notify(target, sourceId, failureBadge('bad_token', 'refused before'), false);
    if (w) w.watchers.push({ target, sourceId });
    else this.waiting.set(key, { provider, raw, watchers: [{ target, sourceId }], shown });
    if (!shown) this.deps.notify(target, sourceId, this.paced ? PACED : CHECKING, false);
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
      this.paced = false;
    });
  }

  /** How many messages wait for the provider to answer again. */
  get heldCount(): number {
    return this.held.size;
  }

  /** The provider may be back: the messages kept for it go to the worker again. False when none were kept. */
  retry(): boolean {
    if (this.held.size === 0) return false;
    for (const [key, w] of this.held) {
      const also = this.waiting.get(key);
      if (also) also.watchers.push(...w.watchers);
      else this.waiting.set(key, w);
    }
    this.held.clear();
    this.running ??= this.drain().finally(() => (this.running = undefined));
    return true;
  }

  /**
   * Keys were locked (or the check turned off): drops the decrypted messages
   * not yet handed to the worker (a batch already there finishes) and tells
   * their views why.
   */
  forgetWaiting(why: SpamBadge = LOCKED): void {
    for (const w of [...this.waiting.values(), ...this.held.values()])
      for (const { target, sourceId } of w.watchers) this.deps.notify(target, sourceId, why, false);
    this.waiting.clear();
    this.held.clear();
  }

  /**
   * Classifies batches until nothing waits; items offered meanwhile form the
   * next batch. A batch is one account's: messages offered after a new token
   * go out under that token only.
   */
  private async drain(): Promise<void> {
    for (let first = this.waiting.values().next(); !first.done; first = this.waiting.values().next()) {
      const { provider } = first.value;
      const account = accountOf(provider);
      const batch = new Map<string, Waiting>();
      for (const [key, w] of this.waiting)
        if (accountOf(w.provider) === account) {
          batch.set(key.slice(account.length + 1), w);
          this.waiting.delete(key);
        }
      const items = [...batch].map(([messageId, w]) => ({ messageId, raw: w.raw }));
      const shown = new Map<string, SpamBadge>();
      for (const [messageId, w] of batch) if (w.shown) shown.set(messageId, w.shown);
      const show = (messageId: string, badge: SpamBadge, fresh = false) => {
        for (const { target, sourceId } of batch.get(messageId)?.watchers ?? [])
          this.deps.notify(target, sourceId, badge, fresh);
      };
      const tell = (messageId: string, badge: SpamBadge, fresh = false) => {
        shown.set(messageId, badge);
        show(messageId, badge, fresh);
      };
      this.paced = false; // until this batch is slowed too
      try {
        await this.deps.classify(provider, items, (e) => {
          // Still checking, and why it takes longer: not an outcome (a failure may follow).
          if (e.event === 'slowed') {
            this.paced = true;
            for (const messageId of batch.keys()) if (!shown.has(messageId)) show(messageId, PACED);
            for (const w of this.waiting.values())
              if (!w.shown)
                for (const { target, sourceId } of w.watchers) this.deps.notify(target, sourceId, PACED, false);
          }
          // A stored verdict shown already is not shown (nor acted on) again.
          if (e.event === 'outcome' && !batch.get(e.outcome.messageId)?.shown) {
            this.deps.onOutcome?.(e.outcome);
            tell(e.outcome.messageId, outcomeBadge(e.outcome), true);
          }
          // A hit joins the verdict's badge; one that makes the message spam is fresh (it may move it to Junk).
          const verdict = e.event === 'blocklist' && e.blocklist.hits.length > 0 && shown.get(e.blocklist.messageId);
          if (e.event === 'blocklist' && verdict) {
            const badge = withBlocklist(verdict, e.blocklist.hits);
            tell(e.blocklist.messageId, badge, verdict.state !== 'spam');
          }
          // The verdict was shown already (and acted on): only the topic line is added.
          const before = e.event === 'topic' && e.topic.kind !== 'failed' && shown.get(e.topic.messageId);
          if (before) tell(e.topic.messageId, { ...before, topicShared: true });
        });
      } catch (e) {
        const failure = this.failureOf(e);
        this.deps.onFailure?.(failure);
        const unanswered = [...batch].filter(([messageId]) => !shown.has(messageId));
        if (!isTransient(failure.code))
          for (const [messageId] of unanswered) tell(messageId, failureBadge(failure.code, failure.detail));
        // The provider is down or holds the pace back: kept, to go out again at the next try.
        else
          for (const [messageId, w] of unanswered) {
            if (this.held.size >= MAX_HELD) {
              tell(messageId, NOT_KEPT);
              continue;
            }
            this.held.set(`${account}\n${messageId}`, w);
            show(messageId, failure.code === 'rate_limited' ? PACED : PROVIDER_DOWN);
          }
      }
    }
  }
}
