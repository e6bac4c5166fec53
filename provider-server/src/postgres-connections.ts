// The PostgreSQL store's connections (store-postgres.ts): a few pipelined
// connections for the statements, and one for the sync rounds of group commit.
import pg from 'pg';

interface Pipelined {
  client: pg.Client;
  ready: Promise<unknown>;
  /** Statements sent on it and not yet answered. */
  busy: number;
}

/**
 * A few pipelined connections (pg's `pipeline` mode): a statement is sent at
 * once, behind those still running on the least busy connection (the
 * statements of one turn all on the one its first went to), instead of
 * waiting for a free connection of a pool, so the statements of many
 * sessions share each round trip, and the server reads them in one go. Each
 * statement is still a transaction of its own, and prepared once per
 * connection (named statements: parsed and planned once). A connection that
 * fails is replaced at its next use; the statements in flight on it fail.
 */
export class PipelinedConnections {
  private readonly clients: (Pipelined | undefined)[];
  private readonly names = new Map<string, string>();
  /** Connections whose socket holds its writes until the end of this turn of the event loop (`hold`). */
  private readonly held = new Set<Pipelined>();
  /** Where this turn's statements go (turnConnection). */
  private turn: Pipelined | undefined;

  constructor(
    private readonly config: pg.ClientConfig,
    size: number,
  ) {
    this.clients = Array.from({ length: size }, () => undefined);
  }

  /** Runs `text` (`$n` placeholders) with `values`. */
  async query(text: string, values: unknown[]): Promise<pg.QueryResult> {
    let name = this.names.get(text);
    if (name === undefined) this.names.set(text, (name = `pmf_${this.names.size}`));
    const c = this.turnConnection();
    c.busy++;
    try {
      await c.ready;
      this.hold(c);
      return await c.client.query({ name, text, values });
    } finally {
      c.busy--;
    }
  }

  /**
   * Holds the connection's writes until the end of this turn: the statements
   * of every session served in it go out in one write, where pg writes each
   * on its own (one writev per statement was two fifths of the store's cost
   * to the event loop under load).
   */
  private hold(c: Pipelined): void {
    if (this.held.has(c)) return;
    this.held.add(c);
    const socket = c.client.connection.stream;
    socket.cork();
    setImmediate(() => {
      this.held.delete(c);
      socket.uncork();
    });
  }

  /**
   * The connection of this turn of the event loop: the least busy when the
   * turn's first statement is sent, and every later one of the turn goes
   * behind it, so the turn's statements leave in one write (`hold`) and wake
   * one server process, not one per connection.
   */
  private turnConnection(): Pipelined {
    if (!this.turn) {
      this.turn = this.leastBusy();
      setImmediate(() => (this.turn = undefined));
    }
    return this.turn;
  }

  /** The connection with the fewest statements in flight; a new one rather than a busy one while there is room. */
  private leastBusy(): Pipelined {
    const load = (c: Pipelined | undefined): number => c?.busy ?? 0.5;
    let best = 0;
    for (let i = 1; i < this.clients.length; i++) if (load(this.clients[i]) < load(this.clients[best])) best = i;
    const open = this.clients[best];
    if (open) return open;
    const client = new pg.Client({ ...this.config, pipeline: true });
    const c: Pipelined = { client, ready: client.connect(), busy: 0 };
    const drop = (): void => {
      if (this.clients[best] === c) this.clients[best] = undefined;
    };
    // A dropped connection must not crash the process: the next statement opens another.
    client.on('error', drop);
    client.on('end', drop);
    c.ready.catch(drop);
    this.clients[best] = c;
    return c;
  }

  async end(): Promise<void> {
    const open = this.clients.splice(0);
    await Promise.all(open.map((c) => c?.client.end().catch(() => undefined)));
  }
}

/** Any sequence: `setval` on it is the cheapest statement whose commit writes to the log and so waits for the disk. */
export const SYNC_SEQUENCE = 'pmf_sync';

/**
 * The connection of the sync rounds, with synchronous_commit on whatever the
 * server's default: its commit returns once the log is flushed up to it,
 * which covers every commit before it, of any connection or instance. A
 * dropped connection is replaced, and the round tried once more on the new one.
 */
export class SyncConnection {
  private client: Promise<pg.Client> | undefined;

  constructor(private readonly config: pg.ClientConfig) {}

  /** Connected and ready for sync rounds; `first` runs before (the schema migration). */
  async open(first: (client: pg.Client) => Promise<void> = async () => undefined): Promise<void> {
    const client = await this.connect();
    await first(client);
  }

  /** One sync round; on a dropped connection, once more on a new one (its commit covers the same). */
  async sync(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const client = await (this.client ??= this.connect());
      try {
        await client.query(`SELECT setval('${SYNC_SEQUENCE}', 1)`);
        return;
      } catch (e) {
        this.client = undefined;
        await client.end().catch(() => undefined);
        if (attempt === 2) throw new Error(`store: syncing the log failed (${(e as Error).message})`);
      }
    }
  }

  private connect(): Promise<pg.Client> {
    const client = new pg.Client(this.config);
    client.on('error', () => undefined); // reported by the next round's query
    const connected = client
      .connect()
      .then(() => client.query('SET synchronous_commit = on'))
      .then(() => client);
    this.client = connected;
    connected.catch(() => {
      if (this.client === connected) this.client = undefined;
    });
    return connected;
  }

  async end(): Promise<void> {
    const client = await this.client?.catch(() => undefined);
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
