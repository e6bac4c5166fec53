// Test harness: a server on an ephemeral loopback port with a real store and
// an in-test ProviderCrypto double (the session layer's tests check framing,
// state and store rules; the real crypto is exercised by the end-to-end tests).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import {
  decodeMessage,
  encodeMessage,
  type Message,
  type MessageName,
  type Messages,
} from '../../protocol/messages.js';
import { makeParams } from '../../wasm/ts/he.js';
import { loadConfig, type ConfigOverrides } from '../src/config.js';
import { LIMIT_DEFAULTS, USER_KEY_BUDGET_MAX, type ServerLimits } from '../src/limits.js';
import { evaluateWithKeyFile } from '../src/blocklist.js';
import type { ProviderCrypto, ServedModel } from '../src/crypto.js';
import { startServer, type RunningServer, type ServerOptions } from '../src/server.js';
import type { Store, Task } from '../src/store.js';
import { openSqliteStore } from '../src/store-sqlite.js';

export interface Harness {
  server: RunningServer;
  store: Store;
  model: ServedModel;
  crypto: ProviderCrypto & { failNext?: Error; ended: string[] };
  dir: string;
  logs: string[];
  close(): Promise<void>;
}

export async function startHarness(
  limits: Partial<ServerLimits> = {},
  overrides: Omit<ConfigOverrides, 'limits'> = {},
  extra: Pick<ServerOptions, 'blocklists'> & { store?: Store } = {},
): Promise<Harness> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-srv-'));
  const pkg = path.join(dir, 'spam-v2.pmf');
  const bytes = new Uint8Array(100_000).map((_, i) => (i * 31) & 0xff);
  fs.writeFileSync(pkg, bytes);
  const model: ServedModel = {
    id: 'spam',
    version: 2,
    packageFile: pkg,
    packageBytes: bytes.length,
    packageSha256: createHash('sha256').update(bytes).digest('hex'),
    params: makeParams({ N: 1000, B: 1, T: 24 }),
    providerSeed: '00'.repeat(32),
    keyFile: path.join(dir, 'unused.key'),
  };
  const crypto: Harness['crypto'] = {
    ended: [],
    async publicKey(_m, nonce) {
      return createHash('sha256').update('p0').update(nonce).digest();
    },
    async keySwitchKey(_m, user) {
      return createHash('sha256').update(`ksk ${user.epoch}`).update(user.salt).digest();
    },
    async ot(_s, _m, payload) {
      return payload.slice().reverse();
    },
    async spam(_s, _m, _user, lwe, choices) {
      if (crypto.failNext) {
        const e = crypto.failNext;
        crypto.failNext = undefined;
        throw e;
      }
      // Fresh randomness per call, as a real garbling has: a recomputed answer never equals a recorded one.
      return new Uint8Array([lwe.length & 0xff, choices.length, ...randomBytes(16)]);
    },
    async topics() {
      throw new Error('topics: not in this double (provider-server/test/topics.test.ts runs the real crypto)');
    },
    async topicLabels() {
      throw new Error('topicLabels: not in this double');
    },
    async blocklist(keyFile, blinded) {
      return evaluateWithKeyFile(keyFile, blinded);
    },
    async endSession(id) {
      crypto.ended.push(id);
    },
    health: () => ({ workers: 1, restarts: 0, degraded: false }),
    async close() {},
  };
  // A given store (instances sharing one) is the caller's to close.
  const { store = openSqliteStore(':memory:'), ...options } = extra;
  const config = loadConfig({
    env: {},
    overrides: { ...overrides, port: 0, dataDir: dir, limits: { ...limitsDefaults(), ...limits } },
  });
  const logs: string[] = [];
  const server = await startServer({
    config,
    store,
    crypto,
    models: { current: (id) => (id === 'spam' ? model : undefined), all: () => [model] },
    log: (l) => logs.push(l),
    ...options,
  });
  return {
    server,
    store,
    model,
    crypto,
    dir,
    logs,
    async close() {
      await server.close();
      if (!extra.store) await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Leaves a message classified as a finished classification would: claimed, its answer sent and acknowledged. */
export async function markClassified(
  store: Store,
  userId: number,
  messageId: string,
  task: Task = 'spam',
): Promise<void> {
  const claim = await store.claim(userId, messageId, task, Buffer.alloc(32));
  if (typeof claim !== 'object') throw new Error(`cannot claim ${messageId}: ${claim}`);
  await store.recordAnswer(userId, messageId, task, claim.attempt, null);
}

/** Small, fast limits for tests (the production defaults are LIMIT_DEFAULTS). */
/** Production limits, loosened where tests open many sessions from one address. */
function limitsDefaults(): ServerLimits {
  return {
    ...LIMIT_DEFAULTS,
    maxFrameBytes: 64 * 1024,
    requestsPerMinute: 100,
    maxSessions: 50,
    idleTimeoutMs: 60_000,
    hellosPerMinute: 1000,
    connectionsPerMinutePerAddress: 1000,
    connectionsPerAddress: 1000,
    pingsPerMinute: 1000,
    userKeyBudget: USER_KEY_BUDGET_MAX,
  };
}

/** A raw protocol connection for tests. */
export class TestClient {
  private readonly inbox: Message[] = [];
  private waiters: ((m: Message) => void)[] = [];
  closed: { code: number; reason: string } | undefined;
  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => {
      const m = decodeMessage(new Uint8Array(data), 1 << 24);
      const w = this.waiters.shift();
      if (w) w(m);
      else this.inbox.push(m);
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
    });
  }

  static async connect(url: string, options?: WebSocket.ClientOptions): Promise<TestClient> {
    const ws = new WebSocket(url, options);
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new TestClient(ws);
  }

  sendRaw(data: Uint8Array | string): void {
    this.ws.send(data);
  }

  send<K extends MessageName>(name: K, requestId: number, fields: Messages[K]): void {
    this.ws.send(encodeMessage(name, requestId, fields));
  }

  next(timeoutMs = 5000): Promise<Message> {
    const m = this.inbox.shift();
    if (m) return Promise.resolve(m);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no frame within timeout')), timeoutMs);
      this.waiters.push((x) => {
        clearTimeout(t);
        resolve(x);
      });
    });
  }

  async request<K extends MessageName>(name: K, requestId: number, fields: Messages[K]): Promise<Message> {
    this.send(name, requestId, fields);
    return this.next();
  }

  async waitClosed(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    const start = Date.now();
    while (!this.closed && Date.now() - start < timeoutMs) await new Promise((r) => setTimeout(r, 10));
    if (!this.closed) throw new Error('socket not closed');
    return this.closed;
  }

  close(): void {
    this.ws.close();
  }
}

export const NONCE = new Uint8Array(32).fill(1);
