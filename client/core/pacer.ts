// Keeps a client under its provider's per-user request limit instead of
// running into it: the provider refuses frames past `requestsPerMinute` in a
// minute of its clock (rate_limited), and a refused OT or request frame costs
// the session (it is closed and set up again). The frames it counts
// (MESSAGE_COUNTED, UnitFrames in protocol/exchanges.ts) are sent at most `perMinute` in any WINDOW_MS, which holds
// the provider's calendar minutes too; like the provider, the pacer counts a
// message's first FRAMES_PER_MESSAGE requests once (MESSAGE_COUNTED). One
// pacer per user and provider in a JS realm, shared by its spam, link-check
// and topic sessions.
import { FRAMES_PER_MESSAGE } from '../../protocol/limits.js';

/** A minute and a margin for the network's jitter between the client's clock and the provider's. */
export const WINDOW_MS = 61_000;

/** Message ids a pacer remembers (a backlog's worth). */
const REMEMBERED_MESSAGES = 20_000;

export class RatePacer {
  /** When each frame of the current window went, oldest first. */
  private readonly sent: number[] = [];

  private perMinute = 1;

  /** Frames sent per message id, oldest first; forgetting one only counts it again (the safe side). */
  private readonly perMessage = new Map<string, number>();

  /**
   * @param onWait called each time a frame has to wait for the limit (the
   *   user sees why a check takes longer, see onPacedWait)
   */
  constructor(
    perMinute: number,
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
    private readonly onWait: () => void = () => undefined,
  ) {
    this.limit(perMinute);
  }

  /** The provider's limit, from a welcome (it may change between sessions); a frame a minute at least. */
  limit(perMinute: number): void {
    this.perMinute = Math.max(1, Math.floor(perMinute) || 1);
  }

  /**
   * Resolves when one more counted frame may go, and counts it; a frame
   * naming `messageId` counts only when it is the message's first, or past
   * its FRAMES_PER_MESSAGE.
   */
  async take(messageId?: string): Promise<void> {
    if (messageId !== undefined) {
      const sent = (this.perMessage.get(messageId) ?? 0) + 1;
      this.perMessage.delete(messageId);
      this.perMessage.set(messageId, sent);
      if (this.perMessage.size > REMEMBERED_MESSAGES) this.perMessage.delete(this.perMessage.keys().next().value!);
      if (sent > 1 && sent <= FRAMES_PER_MESSAGE) return;
    }
    for (;;) {
      const t = this.now();
      while (this.sent.length > 0 && this.sent[0] <= t - WINDOW_MS) this.sent.shift();
      if (this.sent.length < this.perMinute) {
        this.sent.push(t);
        return;
      }
      this.onWait();
      await this.sleep(this.sent[0] + WINDOW_MS - t);
    }
  }
}

const pacers = new Map<string, RatePacer>();
/** How many realms (extension workers) share each user's rate: each paces to its part. */
let share = 1;

/** This realm paces to 1/`n` of each provider's rate from the next welcome on (extension/private/worker-pool.ts). */
export function sharePace(n: number): void {
  share = Math.max(1, Math.floor(n) || 1);
}

/** Who wants to know when a user's frames wait, by token (a token is one user at one provider). */
const waitWatchers = new Map<string, Set<() => void>>();

/** The pacer of one user (token) at one provider (url), made on first use. */
export function pacerFor(url: string, token: string, providerPerMinute: number): RatePacer {
  const key = JSON.stringify([url, token]);
  const perMinute = Math.floor(providerPerMinute / share);
  let pacer = pacers.get(key);
  if (pacer) pacer.limit(perMinute);
  else {
    const onWait = () => waitWatchers.get(token)?.forEach((fn) => fn());
    pacers.set(key, (pacer = new RatePacer(perMinute, undefined, undefined, onWait)));
  }
  return pacer;
}

/** Calls `fn` whenever a frame of this user (token) waits for its provider's limit; returns the unsubscribe. */
export function onPacedWait(token: string, fn: () => void): () => void {
  let watchers = waitWatchers.get(token);
  if (!watchers) waitWatchers.set(token, (watchers = new Set()));
  watchers.add(fn);
  return () => {
    watchers.delete(fn);
    if (watchers.size === 0) waitWatchers.delete(token);
  };
}
