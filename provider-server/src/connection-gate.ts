// Who may open a WebSocket, decided before the socket costs the provider a
// session. Sockets that have not said hello yet and sessions that have are
// separate budgets, so waiting sockets never lock real users out:
//
// - New connections per minute, per address and per network prefix (/24 for
//   IPv4, /64 for IPv6: what one host or one customer line usually holds),
//   counted in the store, so the limits hold across instances behind a load
//   balancer; a per-instance count in memory refuses a flood before it
//   reaches the store.
// - Open sockets per address (per instance, in memory).
// - Sockets waiting for hello: at most `unauthenticatedPerPrefix` per prefix
//   and `maxUnauthenticated` in all. When all are taken, a newcomer is not
//   refused: the oldest waiting socket of the prefix holding the most goes
//   instead, unless that prefix holds no more than the newcomer's own. A
//   client from a network that is not flooding always gets its socket, and
//   its hello, sent at once, comes long before its turn to be evicted.
// - Sessions (after hello): `maxSessions`.
import net from 'node:net';
import type { ServerLimits } from './limits.js';
import type { SqlDriver } from './store-driver.js';

export type GateLimits = Pick<
  ServerLimits,
  | 'connectionsPerMinutePerAddress'
  | 'connectionsPerMinutePerPrefix'
  | 'connectionsPerAddress'
  | 'maxUnauthenticated'
  | 'unauthenticatedPerPrefix'
  | 'maxSessions'
>;

/** The network an address belongs to, for per-prefix limits: its /24 (IPv4, IPv4-mapped too) or /64 (IPv6). */
export function prefixOf(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const v4 = mapped ?? (net.isIPv4(address) ? address : undefined);
  if (v4) return `${v4.split('.').slice(0, 3).join('.')}.0/24`;
  if (!net.isIPv6(address)) return address;
  const [head, tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = address.includes('::')
    ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/** Fixed one-minute windows of new connections per key (an address or a prefix), in the store. */
export class ConnectionWindows {
  constructor(private readonly db: SqlDriver) {}

  /** Counts one connection for `key`; false when this minute's limit is reached. One statement, so instances count together. */
  async take(key: string, limitPerMinute: number, now = Date.now()): Promise<boolean> {
    const window = Math.floor(now / 60_000) * 60_000;
    const counted = await this.db.all(
      'INSERT INTO connection_windows (window_start, key, count) VALUES (?, ?, 1) ON CONFLICT (window_start, key) DO UPDATE SET count = connection_windows.count + 1 WHERE connection_windows.count < ? RETURNING count',
      [window, key, limitPerMinute],
      'committed', // a count lost in an OS crash lets a few more connections through
    );
    return counted.length === 1;
  }

  /** Drops the windows before the current one (every instance, once a minute). */
  prune(now = Date.now()): Promise<number> {
    return this.db.run('DELETE FROM connection_windows WHERE window_start < ?', [Math.floor(now / 60_000) * 60_000]);
  }
}

/** A per-instance count per key in fixed one-minute windows: the cheap first gate. */
class LocalWindows {
  private window = 0;
  private readonly counts = new Map<string, number>();

  take(key: string, limit: number, now: number): boolean {
    const window = Math.floor(now / 60_000);
    if (window !== this.window) {
      this.window = window;
      this.counts.clear();
    }
    const n = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, n);
    return n <= limit;
  }
}

/** An admitted socket's place in the budgets; the server reports what becomes of it. */
export interface Ticket {
  /** Said hello: it leaves the waiting budget for the sessions'. */
  authenticated(): void;
  /** Closed, for whatever reason. */
  closed(): void;
  /** Set when a newcomer took this waiting socket's place: close it (onEvict is called if set by then). */
  evicted: boolean;
  onEvict?: () => void;
}

interface Waiting extends Ticket {
  prefix: string;
}

export type Refusal = 429 | 503;

export class ConnectionGate {
  private readonly local = new LocalWindows();
  private readonly openPerAddress = new Map<string, number>();
  /** Sockets waiting for hello, per prefix, oldest first. */
  private readonly waiting = new Map<string, Waiting[]>();
  private waitingCount = 0;
  private sessions = 0;

  constructor(
    private readonly limits: GateLimits,
    private readonly shared: Pick<ConnectionWindows, 'take'>,
  ) {}

  /** Sockets waiting for hello now (for tests and metrics). */
  get unauthenticated(): number {
    return this.waitingCount;
  }

  /**
   * Admits a socket from `address`, or says how to refuse it: 429 for its
   * address's or network's limits, 503 when the server is full.
   */
  async admit(address: string, now = Date.now()): Promise<Ticket | Refusal> {
    const l = this.limits;
    const prefix = prefixOf(address);
    if ((this.openPerAddress.get(address) ?? 0) >= l.connectionsPerAddress) return 429;
    if ((this.waiting.get(prefix)?.length ?? 0) >= l.unauthenticatedPerPrefix) return 429;
    if (this.sessions >= l.maxSessions) return 503;
    const local =
      this.local.take(`a ${address}`, l.connectionsPerMinutePerAddress, now) &&
      this.local.take(`p ${prefix}`, l.connectionsPerMinutePerPrefix, now);
    if (!local) return 429;
    const [byAddress, byPrefix] = await Promise.all([
      this.shared.take(`a ${address}`, l.connectionsPerMinutePerAddress, now),
      this.shared.take(`p ${prefix}`, l.connectionsPerMinutePerPrefix, now),
    ]);
    if (!byAddress || !byPrefix) return 429;
    // Checked again: others may have been admitted while the store counted.
    if ((this.openPerAddress.get(address) ?? 0) >= l.connectionsPerAddress) return 429;
    if ((this.waiting.get(prefix)?.length ?? 0) >= l.unauthenticatedPerPrefix) return 429;
    if (this.waitingCount >= l.maxUnauthenticated && !this.evictFor(prefix)) return 503;
    return this.enter(address, prefix);
  }

  /** Closes the oldest waiting socket of the prefix holding the most, if it holds more than `prefix` does. */
  private evictFor(prefix: string): boolean {
    let most: Waiting[] | undefined;
    for (const list of this.waiting.values()) if (!most || list.length > most.length) most = list;
    if (!most || most.length <= (this.waiting.get(prefix)?.length ?? 0)) return false;
    const oldest = most[0];
    this.leaveWaiting(oldest);
    oldest.evicted = true;
    oldest.onEvict?.();
    return true;
  }

  private leaveWaiting(t: Waiting): void {
    const list = this.waiting.get(t.prefix);
    const i = list?.indexOf(t) ?? -1;
    if (i < 0) return;
    list!.splice(i, 1);
    if (list!.length === 0) this.waiting.delete(t.prefix);
    this.waitingCount--;
  }

  private enter(address: string, prefix: string): Ticket {
    this.openPerAddress.set(address, (this.openPerAddress.get(address) ?? 0) + 1);
    let state: 'waiting' | 'session' | 'closed' = 'waiting';
    const ticket: Waiting = {
      prefix,
      evicted: false,
      authenticated: () => {
        if (state !== 'waiting') return;
        state = 'session';
        this.leaveWaiting(ticket);
        this.sessions++;
      },
      closed: () => {
        if (state === 'closed') return;
        if (state === 'waiting') this.leaveWaiting(ticket);
        else this.sessions--;
        state = 'closed';
        const open = (this.openPerAddress.get(address) ?? 1) - 1;
        if (open > 0) this.openPerAddress.set(address, open);
        else this.openPerAddress.delete(address);
      },
    };
    const list = this.waiting.get(prefix) ?? [];
    list.push(ticket);
    this.waiting.set(prefix, list);
    this.waitingCount++;
    return ticket;
  }
}
