// provider-server command line.
//   tsx provider-server/src/cli.ts serve [--config FILE] [--store postgres://...]
//   (or, compiled by npm run build:server: node dist/server/provider-server/src/cli.js serve ...)
//   tsx provider-server/src/cli.ts add-user NAME [--config FILE]        prints a new bearer token
//   tsx provider-server/src/cli.ts issue-token NAME [--config FILE]
//   tsx provider-server/src/cli.ts delete-user NAME [--config FILE]     deletes an account and all it holds but
//       its key epochs (README.md#deleting-an-account); the running server refuses its tokens at once
//   tsx provider-server/src/cli.ts tokens NAME [--config FILE]          a user's live tokens (id, kind, last use, expiry)
//   tsx provider-server/src/cli.ts revoke-token NAME ID|all [--config FILE]
//   tsx provider-server/src/cli.ts deliver NAME FILE... [--config FILE]  registers raw (encrypted) MIME messages:
//       message files, mbox (*.mbox) and JSON-lines (*.jsonl, {"id"?, "raw"|"text"}), the last two gzip allowed
//   tsx provider-server/src/cli.ts lmtp [--config FILE]                 the LMTP stage in front of Dovecot (README)
//   tsx provider-server/src/cli.ts log-key [--config FILE]              prints the package log's verifier key (to publish, for witnesses)
//   tsx provider-server/src/cli.ts topics [NAME] [--config FILE]        per-topic counts, or one user's topic history
//   tsx provider-server/src/cli.ts admin-token                          a new admin token and the SHA-256 to configure
//   tsx provider-server/src/cli.ts webmail-secret                       a new webmail secret (Roundcube plugin) and its SHA-256
//   tsx provider-server/src/cli.ts backup DEST [--config FILE]           copies the data directory and the store, online
//   tsx provider-server/src/cli.ts restore SRC [--config FILE]           puts a backup in place (every instance stopped)
//   tsx provider-server/src/cli.ts blocklist-publish ID FILE [--config FILE]  imports a list source (docs/blocklist.md)
//       as the next version of private blocklist ID, with a delta from the current one; restart serve to publish it
// Configuration: the JSON file and PMF_* environment variables (config.ts).
// --store (or the config key `store`, PMF_STORE) names a shared PostgreSQL store;
// without it every command uses the SQLite file in the data directory.
// Admin commands open the same store as a running server (SQLite: WAL mode).
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { backup, restore } from './backup.js';
import { loadConfig } from './config.js';
import { lmtpConfig } from './lmtp/config.js';
import { DeliveryJournal } from './lmtp/journal.js';
import { storeRegistry } from './lmtp/registry.js';
import { startLmtpStage } from './lmtp/stage.js';
import { storedCheck } from './lmtp/stored-check.js';
import { readMailbox } from '../../models/data/mailbox.js';
import { BlocklistCatalog } from './blocklist.js';
import { createLog, logWarnings, type Log } from './log.js';
import { progressBar, topicNames } from './models.js';
import { PackageLog } from './package-log.js';
import { openStore, startProvider } from './provider.js';

const USAGE = `usage: provider-server <serve|lmtp|add-user NAME|issue-token NAME|delete-user NAME|tokens NAME|revoke-token NAME ID|all|deliver NAME FILE...|log-key|topics [NAME]|admin-token|webmail-secret|blocklist-publish ID FILE|backup DEST|restore SRC> [--config FILE] [--store postgres://URL]
  deliver: FILE is a message, an mbox (*.mbox[.gz]) or JSON-lines (*.jsonl[.gz], {"id"?, "raw"|"text"} per line)`;

/** Commands printing a fresh secret and the SHA-256 the configuration holds instead of it. */
const SECRETS = new Map([
  ['admin-token', { prefix: 'pmfadmin', configure: 'adminTokenSha256 or PMF_ADMIN_TOKEN_SHA256' }],
  ['webmail-secret', { prefix: 'pmfwebmail', configure: 'webmailSecretSha256 or PMF_WEBMAIL_SECRET_SHA256' }],
]);

/** The log of a long-running command (serve, lmtp): its failure to start is a log line too. */
let daemonLog: Log | undefined;

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { config: { type: 'string' }, store: { type: 'string' } },
  });
  const [cmd, ...rest] = positionals;
  const config = loadConfig({ file: values.config, overrides: values.store ? { store: values.store } : {} });
  if (cmd === 'serve') {
    const log = (daemonLog = createLog({ name: 'provider' }));
    logWarnings(log);
    const progress = process.stderr.isTTY ? progressBar() : progressBar(process.stderr, (text) => log(text));
    const p = await startProvider(config, { progress });
    log(`listening on ${p.server.httpUrl} (sessions at ${p.server.wsUrl})`);
    for (const m of p.catalog.all()) log(`model ${m.id} v${m.version} sha256 ${m.packageSha256}`);
    log(
      `package log ${p.packageLog.fingerprint}; log key ${p.packageLog.vkey} (publish it out of band: website, DNS TXT, your service README, for clients to pin, and give it to the witnesses: docs/deployment.md#operating-the-package-log)`,
    );
    const stop = (): void => {
      log('shutting down');
      p.close().then(() => process.exit(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return new Promise<number>(() => {}); // runs until a signal
  }
  if (cmd === 'lmtp' && rest.length === 0) {
    const log = (daemonLog = createLog({ name: 'lmtp' }));
    logWarnings(log);
    const lmtp = lmtpConfig(config.lmtp, process.env);
    const store = await openStore(config);
    const journal = new DeliveryJournal(path.join(config.dataDir, 'lmtp-journal.db'));
    const stage = await startLmtpStage({
      config: lmtp,
      journal,
      registry: storeRegistry(store, { keepBodies: lmtp.keepBodies }),
      storedCheck: lmtp.storedCheck && storedCheck(lmtp.storedCheck),
      log,
    });
    log(`listening on ${lmtp.host}:${stage.port}, relaying to ${lmtp.relay.host}:${lmtp.relay.port}`);
    const stop = (): void => {
      stage
        .close()
        .then(() => {
          journal.close();
          return store.close();
        })
        .then(() => process.exit(0));
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    return new Promise<number>(() => {}); // runs until a signal
  }
  const secret = SECRETS.get(cmd ?? '');
  if (secret && rest.length === 0) {
    const token = `${secret.prefix}_${randomBytes(32).toString('base64url')}`;
    console.log(`token  ${token}`);
    console.log(`sha256 ${createHash('sha256').update(token).digest('hex')}  (add to ${secret.configure})`);
    return 0;
  }
  if (cmd === 'blocklist-publish' && rest.length === 2) {
    const r = await BlocklistCatalog.publish(config.dataDir, rest[0], fs.readFileSync(rest[1], 'utf8'));
    const what = r.published ? 'published' : 'unchanged, still';
    console.log(`blocklist ${rest[0]} ${what} version ${r.version} (${r.entries} entries); restart serve to offer it`);
    return 0;
  }
  if ((cmd === 'backup' || cmd === 'restore') && rest.length === 1) {
    const { dataDir, store } = config;
    const r = await (cmd === 'backup'
      ? backup({ dataDir, store, dest: rest[0] })
      : restore({ dataDir, store, src: rest[0] }));
    const done = cmd === 'backup' ? `backed up ${dataDir} to ${rest[0]}` : `restored ${rest[0]} as ${dataDir}`;
    console.log(`${done}: ${r.files} files, ${r.stores.join(' and ') || 'no store'}`);
    return 0;
  }
  if (cmd === 'log-key' && rest.length === 0) {
    console.log(PackageLog.open(config.dataDir, config.packageLog.origin).vkey);
    return 0;
  }
  const store = await openStore(config);
  const policy = { lifetimeMs: config.limits.tokenLifetimeMs, perUser: config.limits.tokensPerUser };
  const user = async (name: string): Promise<number> => {
    const id = await store.userId(name);
    if (id === undefined) throw new Error(`no user ${name}`);
    return id;
  };
  try {
    if (cmd === 'add-user' && rest.length === 1) {
      console.log((await store.addUser(rest[0], policy)).token);
    } else if (cmd === 'issue-token' && rest.length === 1) {
      console.log(await store.issueToken(await user(rest[0]), 'cli', policy));
    } else if (cmd === 'delete-user' && rest.length === 1) {
      const id = await store.deleteUser(rest[0]);
      if (id === undefined) throw new Error(`no user ${rest[0]}`);
      console.log(
        `deleted user ${rest[0]} (id ${id}): its tokens, messages, verdict claims and topics; key epochs kept`,
      );
    } else if (cmd === 'tokens' && rest.length === 1) {
      const day = (t: number) => new Date(t).toISOString().slice(0, 16).replace('T', ' ');
      for (const t of await store.tokens.list(await user(rest[0]), policy))
        console.log(`${t.id}  ${t.kind.padEnd(7)}  used ${day(t.lastUsedAt)}  expires ${day(t.expiresAt)}`);
    } else if (cmd === 'revoke-token' && rest.length === 2) {
      const id = await user(rest[0]);
      if (rest[1] === 'all') console.log(`revoked ${await store.tokens.revokeAll(id)} token(s) of ${rest[0]}`);
      else if (await store.tokens.revoke(id, rest[1])) console.log(`revoked token ${rest[1]} of ${rest[0]}`);
      else throw new Error(`${rest[0]} has no token ${rest[1]} (provider-server tokens ${rest[0]} lists them)`);
    } else if (cmd === 'deliver' && rest.length >= 2) {
      const id = await user(rest[0]);
      for (const file of rest.slice(1)) {
        for (const m of readMailbox(file)) {
          await store.deliver(id, m.id, m.raw);
          console.log(`delivered ${m.id}`);
        }
      }
    } else if (cmd === 'topics' && rest.length <= 1) {
      const names = topicNames(config.dataDir);
      const name = (m: string, v: number, t: number): string => names(m, v)[t] ?? `topic ${t}`;
      if (rest.length === 0) {
        for (const r of await store.topicCounts())
          console.log(`${r.modelId} v${r.version}  ${r.count}  ${name(r.modelId, r.version, r.topic)}`);
      } else {
        const id = await user(rest[0]);
        const optOut = (await store.topicOptOut(id)) ? ' (opted out of topic extraction)' : '';
        console.log(`${rest[0]}${optOut}`);
        for (const r of await store.topicHistory(id))
          console.log(`${new Date(r.at).toISOString()}  ${r.messageId}  ${name(r.modelId, r.version, r.topic)}`);
      }
    } else {
      console.error(USAGE);
      return 2;
    }
  } finally {
    await store.close();
  }
  return 0;
}

if (/provider-server\/src\/cli\.[jt]s$/.test(process.argv[1] ?? '')) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e) => {
      if (daemonLog) daemonLog.error(`cannot start: ${(e as Error).message}`);
      else console.error(`error: ${(e as Error).message}`);
      process.exit(1);
    },
  );
}
