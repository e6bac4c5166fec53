// The provider's log (log.ts): JSON lines with time, level and name; failed
// requests at most once per kind per interval, the interval's end saying how
// many were left out; process warnings as log lines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLog, logWarnings } from '../src/log.js';
import { startHarness, TestClient } from './harness.js';

interface Line {
  level: string;
  time: string;
  name: string;
  pid: number;
  msg: string;
  kind?: string;
  failures?: number;
  [k: string]: unknown;
}

function collecting(failureIntervalMs = 60_000) {
  const lines: Line[] = [];
  const log = createLog({
    name: 'provider',
    failureIntervalMs,
    write: (s) => {
      assert.ok(s.endsWith('\n') && !s.slice(0, -1).includes('\n'), `one line each: ${s}`);
      lines.push(JSON.parse(s) as Line);
    },
  });
  return { log, lines };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('every line is a JSON object with an ISO time, a level word, the process and the message', () => {
  const { log, lines } = collecting();
  log('listening on http://127.0.0.1:8787', { port: 8787 });
  log.warn('bufferutil did not load');
  log.error('store unreachable');
  assert.deepEqual(
    lines.map((l) => [l.level, l.msg, l.name]),
    [
      ['info', 'listening on http://127.0.0.1:8787', 'provider'],
      ['warn', 'bufferutil did not load', 'provider'],
      ['error', 'store unreachable', 'provider'],
    ],
  );
  for (const l of lines) {
    assert.match(l.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(Math.abs(Date.parse(l.time) - Date.now()) < 60_000);
    assert.equal(l.pid, process.pid);
  }
  assert.equal(lines[0].port, 8787);
});

test('a flood of failed requests costs one line per kind per interval, and the end of the interval counts the rest', (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { log, lines } = collecting(60_000);
  for (let i = 0; i < 200; i++) log.failed('admin_unauthorized', 'admin request refused', { address: `10.0.0.${i}` });
  log.failed('session_bad_field', 'session error bad_field');
  assert.deepEqual(
    lines.map((l) => [l.kind, l.msg, l.address]),
    [
      ['admin_unauthorized', 'admin request refused', '10.0.0.0'],
      ['session_bad_field', 'session error bad_field', undefined],
    ],
  );
  t.mock.timers.tick(60_000);
  // The interval ended: one line for the 199 left out; none for the kind that had no more.
  assert.equal(lines.length, 3);
  assert.deepEqual([lines[2].kind, lines[2].failures, lines[2].level], ['admin_unauthorized', 199, 'warn']);
  // That line stands for the next interval: more of the same are counted, not logged.
  log.failed('admin_unauthorized', 'admin request refused');
  assert.equal(lines.length, 3);
  t.mock.timers.tick(60_000);
  assert.deepEqual([lines[3].kind, lines[3].failures], ['admin_unauthorized', 1]);
  // A quiet interval later, the next failure of the kind is logged in full again.
  t.mock.timers.tick(60_000);
  log.failed('admin_unauthorized', 'admin request refused', { level: 'error' });
  assert.equal(lines.length, 5);
  assert.deepEqual([lines[4].level, lines[4].failures], ['error', undefined]);
});

test('process warnings become log lines', async () => {
  const { log, lines } = collecting();
  const listeners = process.listeners('warning');
  try {
    logWarnings(log);
    process.emitWarning('model file m.pmfm has mode 0644', { code: 'PMF_MODEL_FILE_MODE' });
    await sleep(10);
    // (Other warnings of this process may land here too: the mock timers' experimental warning.)
    assert.deepEqual(
      lines.filter((l) => l.code === 'PMF_MODEL_FILE_MODE').map((l) => [l.level, l.msg]),
      [['warn', 'model file m.pmfm has mode 0644']],
    );
  } finally {
    process.removeAllListeners('warning');
    for (const l of listeners) process.on('warning', l);
  }
});

test('the server logs JSON lines, and a session sending 15 bad frames costs one line', async () => {
  const h = await startHarness();
  try {
    const c = await TestClient.connect(h.server.wsUrl);
    for (let i = 0; i < 15; i++) {
      c.sendRaw(new Uint8Array([0xff, 0xff, 0xff]));
      assert.equal((await c.next()).name, 'error');
    }
    c.close();
    const lines = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const l of lines) assert.ok(typeof l.time === 'string' && typeof l.level === 'string' && l.msg, `${l}`);
    const bad = lines.filter((l) => l.kind === 'session_malformed_frame');
    assert.equal(bad.length, 1);
    assert.equal(bad[0].level, 'warn');
    assert.match(String(bad[0].session), /^[A-Za-z0-9_-]{16}$/);
  } finally {
    await h.close();
  }
});
