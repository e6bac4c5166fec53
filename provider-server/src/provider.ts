// Assembles a running provider from a configuration: data directory, store,
// model versions (built on first run), crypto worker pool, HTTP + WebSocket.
import fs from 'node:fs';
import path from 'node:path';
import { BlocklistCatalog } from './blocklist.js';
import type { ServerConfig } from './config.js';
import { createLog } from './log.js';
import { FileModelCatalog, progressBar, type Progress } from './models.js';
import { LogWitnesses } from './log-witnesses.js';
import { PackageLog } from './package-log.js';
import { startServer, type RunningServer } from './server.js';
import type { Store } from './store.js';
import { openPostgresStore } from './store-postgres.js';
import { openSqliteStore } from './store-sqlite.js';
import { WorkerCrypto } from './worker-crypto.js';

export interface Provider {
  server: RunningServer;
  store: Store;
  catalog: FileModelCatalog;
  blocklists: BlocklistCatalog;
  packageLog: PackageLog;
  /** The witnesses the log's checkpoints go to (none configured: an empty list). */
  witnesses: LogWitnesses;
  close(): Promise<void>;
}

/** The configured store: PostgreSQL when `store` is a URL, else the SQLite file in the data directory. */
export async function openStore(config: Pick<ServerConfig, 'dataDir' | 'store'>): Promise<Store> {
  if (config.store) return openPostgresStore(config.store);
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  return openSqliteStore(path.join(config.dataDir, 'store.db'));
}

/** Every topic request spends B' decryptions of the user key: the budget must cover one. */
function checkBudget(catalog: FileModelCatalog, budget: number): void {
  for (const m of catalog.all()) {
    if (m.topics && m.topics.bPrime > budget) {
      throw new Error(
        `model ${m.id}: a topic request needs ${m.topics.bPrime} decryptions (bPrime), more than limits.userKeyBudget ${budget}; lower bPrime or raise the budget`,
      );
    }
  }
}

export async function startProvider(
  config: ServerConfig,
  opts: {
    /** Where the log's JSON lines go (log.ts); stderr by default. */
    log?: (line: string) => void;
    progress?: Progress;
  } = {},
): Promise<Provider> {
  const log = createLog({ name: 'provider', write: opts.log });
  const store = await openStore(config);
  let catalog: FileModelCatalog;
  let packageLog: PackageLog;
  let witnesses: LogWitnesses;
  let blocklists: BlocklistCatalog;
  try {
    catalog = await FileModelCatalog.prepare(config.dataDir, config.models, opts.progress ?? progressBar());
    checkBudget(catalog, config.limits.userKeyBudget);
    // Every served version is logged before the first client can fetch it (and
    // versions built before the log existed are logged on their first start);
    // a log that does not match its signed checkpoint stops the start (BrokenLogError).
    blocklists = BlocklistCatalog.open(config.dataDir);
    packageLog = PackageLog.open(config.dataDir, config.packageLog.origin);
    for (const e of packageLog.record([...catalog.published(), ...blocklists.published()])) {
      log(`package log: appended ${e.modelId} v${e.version} sha256 ${e.packageSha256}`);
    }
    // The head is cosigned before the first client asks for it (each witness
    // within its timeout), then again every refreshSeconds.
    witnesses = new LogWitnesses(packageLog, config.packageLog.witnesses, { log: opts.log });
    await witnesses.cosign();
    witnesses.start(config.packageLog.refreshSeconds);
  } catch (e) {
    await store.close();
    throw e;
  }
  const crypto = new WorkerCrypto(config.workers, {
    otPoolBytes: config.limits.otPoolMiB * 2 ** 20,
    // What the worker-restart alert sends the operator to (deploy/alerts.yml). The error's code
    // only (ERR_WORKER_OUT_OF_MEMORY, …): its message could quote what the worker was working on.
    workerExited: (code, error) =>
      log.error('a crypto worker died and was replaced; its sessions reconnect (session_lost)', {
        exitCode: code,
        ...(error && { error: (error as Error & { code?: string }).code ?? error.name }),
      }),
  });
  let server: RunningServer;
  try {
    server = await startServer({
      config,
      store,
      crypto,
      models: catalog,
      packageLog,
      blocklists,
      log: opts.log,
    });
  } catch (e) {
    witnesses.stop();
    await crypto.close();
    await store.close();
    throw e;
  }
  return {
    server,
    store,
    catalog,
    blocklists,
    packageLog,
    witnesses,
    async close() {
      witnesses.stop();
      await server.close();
      await crypto.close();
      await store.close();
    },
  };
}
