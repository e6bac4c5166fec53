// The provider's remote index on loopback for tests: provider-server's real
// handler and store (SQLite in a temporary folder, or a given store such as
// PostgreSQL's), an account with a token, and what the provider saw: every
// request body by path, as an attacker at the provider records them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { remoteIndexHandler } from '../../../provider-server/src/remote-index/index.js';
import type { Store } from '../../../provider-server/src/store.js';
import { openSqliteStore } from '../../../provider-server/src/store-sqlite.js';
import { tempDir } from '../../../scripts/test/temp-dir.js';

export interface IndexServer {
  url: string;
  store: Store;
  /** The SQLite file (undefined for another store). */
  file?: string;
  /** Request bodies the provider received, by path (e.g. "/remote-index/search"), from clients using `fetch`. */
  seen: Map<string, Uint8Array[]>;
  /** fetch, recording each request body into `seen` (what the provider sees) and each answer's status into `statuses`. */
  fetch: typeof fetch;
  statuses: Map<string, number[]>;
  user(name: string): Promise<{ userId: number; token: string }>;
  close(): Promise<void>;
}

export async function startIndexServer(
  opts: { store?: Store; limits?: Record<string, number> } = {},
): Promise<IndexServer> {
  const file = opts.store ? undefined : path.join(tempDir('pmf-remote-index-'), 'store.db');
  const store = opts.store ?? openSqliteStore(file!);
  const handler = remoteIndexHandler(store, opts.limits, { failed: () => undefined });
  const seen = new Map<string, Uint8Array[]>();
  const statuses = new Map<string, number[]>();
  const push = <T>(m: Map<string, T[]>, k: string, v: T): void => void m.set(k, [...(m.get(k) ?? []), v]);
  const server = http.createServer((req, res) => {
    if (!handler(req, res)) {
      res.writeHead(404);
      res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    store,
    file,
    seen,
    statuses,
    fetch: async (input, init) => {
      const { pathname } = new URL(String(input instanceof Request ? input.url : input));
      push(seen, pathname, init?.body instanceof Uint8Array ? new Uint8Array(init.body) : new Uint8Array(0));
      const res = await fetch(input, init);
      push(statuses, pathname, res.status);
      return res;
    },
    user: (name) => store.addUser(name),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (!opts.store) await store.close();
    },
  };
}
