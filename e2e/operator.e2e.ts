// The operator walkthrough of docs/deployment.md ("From a fresh Debian
// machine to two instances behind HAProxy"), followed on this
// repository with the deploy files as shipped: the server built for
// production (npm run build:server), the configuration read from the
// walkthrough, two instances and the LMTP stage started with the commands and
// environments of their systemd units, HAProxy on deploy/haproxy.cfg over
// TLS (a certificate made here), a real PostgreSQL 15 store and a real
// Dovecot, the walkthrough's own admin commands. The test is the MTA: it delivers
// over LMTP to the stage, which registers each message and relays it to
// Dovecot; the headless client then classifies alice's Maildir as Dovecot
// wrote it through HAProxy, and every verdict must be the plaintext model's.
// Paths of the walkthrough map to temporary ones: /opt/pmf is this checkout,
// /var/lib/pmf and /etc/pmf/provider.json are made here, ports 24 and 2424
// are free ones, and the store URL names the test's PostgreSQL.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { extractFeatures } from '../models/features/index.js';
import { loadPlainModel, plainVerdict } from '../models/plain/index.js';
import { lmtpSend } from '../provider-server/src/lmtp/lmtp-client.js';
import { haproxyConfig, waitFor } from '../provider-server/test/cluster.js';
import { postgresMissing, startPostgres, type TestPostgres } from '../provider-server/test/postgres.js';
import { tempDir } from '../scripts/test/temp-dir.js';
import { root } from './fixtures/browser.js';
import { caughtSpam } from './fixtures/caught-spam.js';
import { dovecotInstalled, startDovecot, type Dovecot } from './fixtures/dovecot.js';
import { freePort, stopGroup } from './fixtures/process.js';

const WALKTHROUGH = path.join(root, 'docs/deployment.md');
const DEPLOY = path.join(root, 'provider-server/deploy');
const skip = !dovecotInstalled()
  ? 'Dovecot is not installed: run scripts/setup.sh'
  : process.getuid?.() !== 0
    ? 'needs root: the test Dovecot runs as the user nobody'
    : !fs.existsSync('/usr/sbin/haproxy')
      ? 'HAProxy is not installed: run scripts/setup.sh'
      : (postgresMissing() ?? false);

/** The walkthrough's section of docs/deployment.md. */
function walkthrough(): string {
  const text = fs.readFileSync(WALKTHROUGH, 'utf8');
  const start = text.indexOf('## From a fresh Debian machine to two instances behind HAProxy');
  assert.ok(start >= 0, 'docs/deployment.md has the operator walkthrough');
  return text.slice(start, text.indexOf('\n## ', start + 3));
}

/** The code blocks of the walkthrough, by language. */
function blocks(lang: string): string[] {
  return [...walkthrough().matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) =>
    m[1].replace(/^ {3}/gm, ''),
  );
}

/** A systemd unit's ExecStart, WorkingDirectory and Environment, instance `%i` filled in. */
function unit(file: string, instance = ''): { exec: string[]; cwd: string; env: Record<string, string> } {
  const text = fs.readFileSync(path.join(DEPLOY, file), 'utf8').replaceAll('%i', instance);
  return {
    exec: /^ExecStart=(.*)$/m.exec(text)![1].split(/\s+/),
    cwd: /^WorkingDirectory=(.*)$/m.exec(text)![1],
    env: Object.fromEntries([...text.matchAll(/^Environment=([A-Z_]+)=(.*)$/gm)].map((m) => [m[1], m[2]])),
  };
}

let dir: string;
let postgres: TestPostgres;
let dovecot: Dovecot;
const children: ChildProcess[] = [];
/** The walkthrough's paths and ports, and where they are here. */
let mapped: [string, string][];
const map = (s: string): string => mapped.reduce((acc, [from, to]) => acc.replaceAll(from, to), s);
let haproxyPort: number;
let instancePorts: number[];
let lmtpPort: number;
let certFile: string;
const logs = new Map<string, string>();

/** Starts a unit's command as systemd would (its environment only), resolving once `ready` says so. */
async function startUnit(name: string, file: string, instance: string, ready: () => Promise<boolean>) {
  const u = unit(file, instance);
  const env = Object.fromEntries(Object.entries(u.env).map(([k, v]) => [k, map(v)]));
  const child = spawn(u.exec[0], u.exec.slice(1).map(map), {
    cwd: map(u.cwd),
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  children.push(child);
  logs.set(name, '');
  child.stderr!.on('data', (d) => logs.set(name, logs.get(name)! + d));
  const exited = new Promise((_, reject) =>
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}):\n${logs.get(name)}`))),
  );
  exited.catch(() => undefined);
  await Promise.race([waitFor(name, 120_000, async () => ((await ready()) ? true : undefined)), exited]);
}

/** Runs a walkthrough command line of the provider CLI (`sudo -u pmf node dist/... ARGS`), as root here. */
function cliLine(line: string): string {
  const args = map(line.replace(/^sudo -u pmf /, '').replace('$(date +%F)', 'daily'))
    .split(/\s+/)
    .filter(Boolean);
  assert.equal(args[0], 'node');
  const r = spawnSync(process.execPath, args.slice(1), {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
  });
  assert.equal(r.status, 0, `${line}\n${r.stderr}`);
  return r.stdout.trim();
}

const healthy = (url: string) => () =>
  fetch(url).then(
    (r) => r.ok,
    () => false,
  );

before(
  async () => {
    if (skip) return;
    dir = tempDir('pmf-operator-');
    fs.chmodSync(dir, 0o755); // Dovecot runs as nobody
    // 1. The production build.
    const build = spawnSync(process.execPath, ['scripts/build-server.mjs'], { cwd: root, encoding: 'utf8' });
    assert.equal(build.status, 0, build.stderr + build.stdout);
    // 2. The store.
    postgres = await startPostgres();
    const storeUrl = await postgres.database();
    dovecot = await startDovecot(path.join(dir, 'dovecot'), { alice: 'imap-secret' });
    [haproxyPort, lmtpPort] = [await freePort(), await freePort()];
    instancePorts = [await freePort(), await freePort()];
    const configFile = path.join(dir, 'etc-pmf', 'provider.json');
    mapped = [
      ['/etc/pmf/provider.json', configFile],
      ['/var/lib/pmf', path.join(dir, 'data')],
      ['/var/backups', path.join(dir, 'backups')],
      ['/opt/pmf', root],
    ];
    // 3. The configuration, as the walkthrough writes it.
    const [json] = blocks('json');
    const config = JSON.parse(map(json)) as {
      store: string;
      lmtp: { port: number; relay: { port: number } };
    };
    assert.equal(config.lmtp.relay.port, 24, "the walkthrough relays to Dovecot's LMTP port");
    config.store = storeUrl;
    config.lmtp.port = lmtpPort;
    config.lmtp.relay.port = dovecot.lmtpPort;
    fs.mkdirSync(path.dirname(configFile), { recursive: true });
    fs.writeFileSync(configFile, JSON.stringify(config));
    // 4. The instances, the first alone until it answers.
    for (const [i, port] of instancePorts.entries())
      await startUnit(
        `instance ${i + 1}`,
        'pmf-provider@.service',
        String(port),
        healthy(`http://127.0.0.1:${port}/healthz`),
      );
    // 5. HAProxy, shipped file, over TLS with a certificate for localhost.
    const key = path.join(dir, 'key.pem');
    certFile = path.join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1'].concat([
        '-addext',
        'subjectAltName=DNS:localhost',
        '-keyout',
        key,
        '-out',
        certFile,
      ]),
      { stdio: 'ignore' },
    );
    const pem = path.join(dir, 'pmf.pem');
    fs.writeFileSync(pem, fs.readFileSync(certFile, 'utf8') + fs.readFileSync(key, 'utf8'), { mode: 0o600 });
    const cfg = path.join(dir, 'haproxy.cfg');
    fs.writeFileSync(cfg, haproxyConfig(haproxyPort, instancePorts, pem));
    const haproxy = spawn('/usr/sbin/haproxy', ['-db', '-f', cfg], { stdio: 'ignore', detached: true });
    children.push(haproxy);
    // 7. The LMTP stage (Dovecot is up: the fixture waited for its LMTP port).
    await startUnit('lmtp', 'pmf-lmtp.service', '', async () => /listening on/.test(logs.get('lmtp') ?? ''));
  },
  { timeout: 600_000 },
);

after(async () => {
  for (const c of children.reverse()) if (c.pid) await stopGroup(c.pid);
  await dovecot?.stop();
  await postgres?.stop();
});

/** A request to HAProxy over TLS, trusting the certificate made for it; its status. */
function viaHaproxy(p: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: 'localhost', port: haproxyPort, path: p, ca: fs.readFileSync(certFile) }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
}

describe('the operator walkthrough', { skip, timeout: 600_000 }, () => {
  let token: string;

  it('serves the public API through HAProxy over TLS and keeps the internal endpoints in', async () => {
    assert.equal(await viaHaproxy('/healthz'), 200);
    assert.equal(await viaHaproxy('/models'), 200);
    // A user's own tokens (src/token-endpoint.ts) are public: the instance answers, asking for a token.
    assert.equal(await viaHaproxy('/tokens'), 401);
    // So is the remote search index (docs/remote-search.md).
    assert.equal(await viaHaproxy('/remote-index/state'), 401);
    assert.equal(await viaHaproxy('/metrics'), 404);
    assert.equal(await viaHaproxy('/admin/topics'), 404);
    // Prometheus scrapes each instance on loopback (step 9).
    for (const port of instancePorts) {
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      assert.ok(/^pmf_worker_restarts_total 0$/m.test(metrics), `instance ${port}: no pmf_worker_restarts_total`);
      // Each instance drops stale recorded answers at start: one store statement at least.
      assert.ok(
        /^pmf_store_seconds_count\{statement="[a-z_ ]+"\} [1-9]/m.test(metrics),
        `instance ${port}: no store timing`,
      );
    }
    // journalctl -o cat shows JSON lines; the package log's key is among them.
    for (const name of ['instance 1', 'instance 2', 'lmtp']) {
      const lines = logs.get(name)!.trim().split('\n');
      for (const l of lines) {
        const o = JSON.parse(l) as { level: string; time: string; msg: string };
        assert.ok(o.level && o.time && o.msg, l);
      }
    }
    assert.match(
      logs.get('instance 1')!,
      /"msg":"package log [^;"]+; log key pmf-package-log\/[^ ]+ \(publish it out of band/,
    );
  });

  it("adds a user with the walkthrough's command and delivers its mail through the LMTP stage into Dovecot", async () => {
    const [line] = blocks('sh').flatMap((b) => b.split('\n').filter((l) => / add-user /.test(l)));
    token = cliLine(line);
    assert.match(token, /^pmf_/);
    const ham = [
      ['Lunch on Friday', 'Shall we meet at noon on Friday about the quarterly figures?'],
      ['Minutes of the meeting', 'Attached are the minutes; please send corrections by Monday.'],
    ];
    const mails = ham.map(([subject, body], i) =>
      Buffer.from(
        `Received: from mx.example.org by mail.example.org with ESMTP id Q${i}\r\n` +
          `From: sender${i}@example.net\r\nTo: alice@example.org\r\nSubject: ${subject}\r\n` +
          `Message-ID: <m${i}@example.net>\r\n\r\n${body}\r\n`,
      ),
    );
    // Held-out spam the bundled model finds spam, so that both verdicts occur below.
    for (const e of await caughtSpam(2)) {
      const bytes = Buffer.from(e.raw).toString('latin1'); // byte for byte, with CRLF line ends as on the wire
      mails.push(Buffer.from(bytes.replace(/\r?\n/g, '\r\n'), 'latin1'));
    }
    for (const [i, data] of mails.entries()) {
      const r = await lmtpSend(
        { host: '127.0.0.1', port: lmtpPort, timeoutMs: 30_000 },
        { from: `sender${i}@example.net`, to: ['alice@example.org'], data },
      );
      assert.equal((r.data[0] ?? r.rcpt[0]).code, 250, (r.data[0] ?? r.rcpt[0]).text);
    }
    const inbox = await dovecot.subjectsIn('alice', 'INBOX');
    assert.equal(inbox.length, mails.length, inbox.join(', '));
    for (const [subject] of ham) assert.ok(inbox.includes(subject), `${subject} in ${inbox.join(', ')}`);
  });

  it('the headless client classifies the mailbox through HAProxy: the plaintext model’s verdicts, each once', async () => {
    const maildir = path.join(dir, 'dovecot/mail/alice/Maildir');
    const classify = (run: string) => {
      const state = path.join(dir, `${run}.jsonl`);
      const r = spawnSync(
        process.execPath,
        ['--import', 'tsx', 'client/node/cli.ts', 'classify', '--server', `https://localhost:${haproxyPort}`].concat([
          '--token',
          token,
          '--cache',
          path.join(dir, 'client'),
          '--state',
          state,
          maildir,
        ]),
        { cwd: root, encoding: 'utf8', env: { PATH: process.env.PATH, NODE_EXTRA_CA_CERTS: certFile } },
      );
      assert.equal(r.status, 0, r.stderr);
      return new Map(
        fs
          .readFileSync(state, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { id: string; verdict: string })
          .map((row) => [row.id, row.verdict]),
      );
    };
    const first = classify('first');
    const plain = loadPlainModel(new Uint8Array(fs.readFileSync(path.join(root, 'models/default/spam.pmfm'))));
    const files = ['new', 'cur'].flatMap((d) =>
      fs.readdirSync(path.join(maildir, d)).map((f) => fs.readFileSync(path.join(maildir, d, f))),
    );
    assert.equal(files.length, 4);
    const expected = new Map<string, string>();
    for (const raw of files) {
      const id = /^X-PMF-Message-Id:\s*(\S+)/im.exec(raw.toString('utf8'))![1];
      expected.set(id, plainVerdict(plain, await extractFeatures(raw, plain.header.featureSpec)));
    }
    assert.deepEqual(first, expected);
    assert.ok(new Set(expected.values()).size === 2, `both verdicts occur: ${[...expected.values()]}`);
    // At most once, whichever instance HAProxy picks: a second run gets no second verdict.
    const second = classify('second');
    assert.deepEqual([...second.values()], Array(4).fill('already-classified'));
  });

  it("backs the provider up with the walkthrough's command (pg_dump and the data directory)", () => {
    const [line] = blocks('sh').flatMap((b) => b.split('\n').filter((l) => / backup /.test(l)));
    assert.match(cliLine(line), /store\.pgdump/);
    const backup = map('/var/backups/pmf/daily');
    assert.ok(fs.statSync(path.join(backup, 'store.pgdump')).size > 0);
    assert.equal(fs.statSync(path.join(backup, 'models/spam/v1.key')).mode & 0o777, 0o600);
  });
});
