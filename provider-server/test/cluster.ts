// Several provider-server processes on loopback sharing one data directory
// (keys, packages, and the store), optionally behind a real HAProxy whose
// configuration is derived from deploy/haproxy.cfg. Used by the scale-out
// test (e2e/scale-out.e2e.ts) and the `load` bench. Every process is a child
// of the caller and is stopped by its PID; nothing waits a fixed time: each
// step polls with a deadline.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { ServerLimits } from '../src/limits.js';
import { openStore } from '../src/provider.js';
import type { Store } from '../src/store.js';

const HAPROXY = '/usr/sbin/haproxy';
const DEPLOY_CFG = path.resolve('provider-server/deploy/haproxy.cfg');
const CLI = path.resolve('provider-server/src/cli.ts');
const START_DEADLINE_MS = 60_000;

export interface Instance {
  readonly pid: number;
  /** http://127.0.0.1:PORT of this instance (its sessions are at /session). */
  readonly url: string;
  readonly port: number;
  /** Resolves with the exit code or signal when the process ends. */
  readonly exited: Promise<number | string>;
  /** The end of its log (stderr). */
  log(): string;
}

export interface ClusterOptions {
  instances: number;
  /** Limits for every instance (the rest are the production defaults). */
  limits?: Partial<ServerLimits>;
  /** Crypto worker threads per instance (default: the server's own default). */
  workers?: number;
  /** Put HAProxy in front (deploy/haproxy.cfg with loopback ports, no TLS). */
  haproxy?: boolean;
  /**
   * The shared store: a postgres:// URL, or none for the SQLite file in the
   * shared data directory (WAL mode, so it works across processes on one machine).
   */
  store?: string;
}

export interface Cluster {
  dir: string;
  dataDir: string;
  /** Opens the store every instance shares (close it after use). */
  openStore(): Promise<Store>;
  instances: Instance[];
  /** HAProxy's URL, or the only instance's. */
  url: string;
  /** Adds users with delivered messages; returns each user's bearer token. */
  provision(users: { name: string; messages: string[] }[]): Promise<Map<string, string>>;
  /** SIGKILL, then waits for the exit. */
  kill(instance: Instance): Promise<void>;
  /** Stops everything (by PID) and removes the directory. */
  close(): Promise<void>;
}

/** Resident set size of a process in MiB (Linux /proc), worker threads included. */
export function rssMb(pid: number): number {
  const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
  if (!m) throw new Error(`no VmRSS for process ${pid}`);
  return Number(m[1]) / 1024;
}

/** CPU time (user + system) a process has used so far, in seconds (Linux /proc; USER_HZ is 100). */
export function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // the name may hold spaces
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Polls `probe` until it returns a value, or fails after `ms`. */
export async function waitFor<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (let delay = 20; ; delay = Math.min(500, delay * 2)) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, delay));
  }
}

/** A port nothing listens on now (for a child process to bind). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function exitOf(child: ChildProcess): Promise<number | string> {
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
}

async function stop(pid: number, exited: Promise<unknown>, signal: NodeJS.Signals): Promise<void> {
  try {
    process.kill(pid, signal);
  } catch {
    return; // already gone
  }
  const timeout = new Promise<'timeout'>((r) => setTimeout(r, 10_000, 'timeout').unref());
  if ((await Promise.race([exited, timeout])) === 'timeout') {
    process.kill(pid, 'SIGKILL');
    await exited;
  }
}

/**
 * deploy/haproxy.cfg with its bind on a loopback port (plain, or with TLS
 * under `tlsPem` instead of the shipped certificate path), its server lines
 * by `ports` (same check options) and its global maxconn lowered to 4096
 * (HAProxy refuses to start when the open-file limit cannot hold 2 ×
 * maxconn), so tests run the shipped configuration.
 */
export function haproxyConfig(port: number, ports: number[], tlsPem?: string): string {
  const cfg = fs.readFileSync(DEPLOY_CFG, 'utf8');
  const server = cfg.match(/^(\s+)server \S+ \S+ (.*)$/m);
  const bind = /^(\s+bind )\S+ ssl crt \S+(.*)$/m;
  if (!server || !bind.test(cfg)) throw new Error(`${DEPLOY_CFG}: expected a TLS bind line and server lines`);
  const servers = ports.map((p, i) => `${server[1]}server p${i + 1} 127.0.0.1:${p} ${server[2]}`).join('\n');
  return cfg
    .replace(/^(\s+)maxconn \d+$/m, '$1maxconn 4096')
    .replace(bind, tlsPem ? `$1127.0.0.1:${port} ssl crt ${tlsPem}$2` : `$1127.0.0.1:${port}`)
    .replace(/^\s+server .*$(\n\s+server .*$)*/m, servers);
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-cluster-'));
  const dataDir = path.join(dir, 'data');
  const configFile = path.join(dir, 'provider.json');
  fs.writeFileSync(
    configFile,
    JSON.stringify({
      host: '127.0.0.1',
      port: 0,
      dataDir,
      ...(opts.store ? { store: opts.store } : {}),
      limits: opts.limits ?? {},
      trustedProxies: ['127.0.0.1'],
      models: [{ id: 'spam', file: path.resolve('models/default/spam.pmfm') }],
      ...(opts.workers ? { workers: opts.workers } : {}),
    }),
  );
  const sharedStore = () => openStore({ dataDir, store: opts.store });
  const children: { pid: number; exited: Promise<unknown> }[] = [];
  const instances: Instance[] = [];

  const addInstance = async (): Promise<Instance> => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve', '--config', configFile], {
      env: { PATH: process.env.PATH },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = exitOf(child);
    children.push({ pid: child.pid!, exited });
    let err = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`provider did not start: ${err}`)), START_DEADLINE_MS);
      child.stderr!.on('data', (d: Buffer) => {
        err = (err + d.toString()).slice(-4000);
        const m = err.match(/listening on (http:\/\/\S+)/);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      void exited.then((code) => reject(new Error(`provider exited (${code}): ${err}`)));
    });
    const inst = { pid: child.pid!, url, port: Number(new URL(url).port), exited, log: () => err };
    instances.push(inst);
    return inst;
  };

  const close = async (): Promise<void> => {
    await Promise.all(children.splice(0).map((c) => stop(c.pid, c.exited, 'SIGTERM')));
    fs.rmSync(dir, { recursive: true, force: true });
  };

  try {
    // The first instance builds the model packages; the others load them.
    await addInstance();
    await Promise.all(Array.from({ length: opts.instances - 1 }, addInstance));
    let url = instances[0].url;
    if (opts.haproxy) {
      const port = await freePort();
      const cfg = path.join(dir, 'haproxy.cfg');
      fs.writeFileSync(
        cfg,
        haproxyConfig(
          port,
          instances.map((i) => i.port),
        ),
      );
      const child = spawn(HAPROXY, ['-db', '-f', cfg], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
      const exited = exitOf(child);
      children.push({ pid: child.pid!, exited });
      url = `http://127.0.0.1:${port}`;
      const up = waitFor('HAProxy to forward /healthz', START_DEADLINE_MS, async () =>
        (await fetch(`${url}/healthz`)).ok ? true : undefined,
      );
      const died = exited.then((code) => Promise.reject(new Error(`haproxy exited (${code}): ${err}`)));
      await Promise.race([up, died]);
    }
    return {
      dir,
      dataDir,
      openStore: sharedStore,
      instances,
      url,
      async provision(users) {
        const store = await sharedStore();
        try {
          const tokens = new Map<string, string>();
          for (const u of users) {
            // await: the store's calls may be asynchronous (a networked store).
            const { userId, token } = await store.addUser(u.name);
            // Issued together, so the SQLite store commits them as one transaction.
            await Promise.all(u.messages.map((id) => store.deliver(userId, id, `Message-ID: <${id}>\r\n\r\nload\r\n`)));
            tokens.set(u.name, token);
          }
          return tokens;
        } finally {
          await store.close();
        }
      },
      async kill(inst) {
        const c = children.find((x) => x.pid === inst.pid);
        if (c) await stop(c.pid, c.exited, 'SIGKILL');
      },
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}
