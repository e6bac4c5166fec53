// The provider as a provider runs it: compiled to JavaScript (npm run
// build:server) and started with plain `node`, no TypeScript loader. Its admin
// commands add a user and deliver a message; the headless client classifies
// it privately against that process over WebSocket. Then its crypto worker
// is killed twice while clients classify (client/test/fault-scenario.ts).
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { main as client } from '../client/node/cli.js';
import { runFaultScenario, WORKER_KILLS } from '../client/test/fault-scenario.js';

const CLI = path.resolve('dist/server/provider-server/src/cli.js');
let dir: string;
let server: ChildProcess;
let url: string;
let env: NodeJS.ProcessEnv;
/** The server's log (stderr). */
let err = '';

/** Runs the compiled provider CLI with plain node (no --import tsx). */
function provider(...args: string[]): string {
  const r = spawnSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

before(async () => {
  const build = spawnSync(process.execPath, ['scripts/build-server.mjs'], { encoding: 'utf8' });
  assert.equal(build.status, 0, build.stderr + build.stdout);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-compiled-'));
  env = {
    PATH: process.env.PATH,
    PMF_DATA_DIR: path.join(dir, 'data'),
    PMF_PORT: '0',
    PMF_WORKERS: '1',
    PMF_MODELS: `spam=${path.resolve('models/default/spam.pmfm')}`,
  };
  server = spawn(process.execPath, [CLI, 'serve'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  url = await new Promise<string>((resolve, reject) => {
    server.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = err.match(/listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]);
    });
    server.once('exit', (code) => reject(new Error(`provider exited with ${code}: ${err}`)));
  });
});
after(() => {
  server?.kill('SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
});

test('the compiled provider serves a private verdict to the client', async () => {
  const token = provider('add-user', 'alice');
  const inbox = path.join(dir, 'inbox');
  fs.mkdirSync(inbox);
  const mail = path.join(inbox, 'mail.eml');
  fs.writeFileSync(
    mail,
    'From: a@example.org\r\nSubject: lunch?\r\nMessage-ID: <compiled-1@test>\r\n\r\nShall we meet at noon?\r\n',
  );
  provider('deliver', 'alice', mail);
  const lines: string[] = [];
  const log = console.log;
  console.log = (...a: unknown[]) => void lines.push(a.join(' '));
  let code: number;
  try {
    code = await client(['classify', '--server', url, '--token', token, '--cache', path.join(dir, 'cache'), inbox]);
  } finally {
    console.log = log;
  }
  assert.equal(code, 0, lines.join('\n'));
  assert.match(lines.join('\n'), /compiled-1@test\s+(ham|spam)/);
  // The compiled tree carries the native libsodium binding (the server logs when it runs without).
  assert.doesNotMatch(err, /native libsodium binding/);
});

test('the compiled provider replaces a killed crypto worker twice: every client gets exactly one verdict per message', async (t) => {
  const r = await runFaultScenario({ ...WORKER_KILLS, compiled: CLI });
  t.diagnostic(`${r.kills} worker kills, ${r.resent} requests re-sent, ${r.seconds} s`);
});
