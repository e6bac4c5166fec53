// The demo's human view of the provider's JSON log (scripts/demo-log.ts),
// fed the lines the provider's own logger writes.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { createLog } from '../../provider-server/src/log.js';
import { humanLine, humanLog } from '../demo-log.js';

function providerLines(write: (log: ReturnType<typeof createLog>) => void): string[] {
  const lines: string[] = [];
  write(createLog({ name: 'provider', write: (l) => lines.push(l.trimEnd()) }));
  return lines;
}

test('info lines read as the message, others with their level and fields, without time or pid', () => {
  const lines = providerLines((log) => {
    log('listening on http://127.0.0.1:8787');
    log.warn('a demo model is served', { model: 'spam', version: 2 });
    log.failed('connection_refused_429', 'WebSocket connection refused: 429 Too Many Requests', {
      address: '10.0.0.1',
    });
  });
  assert.match(lines[0], /^\{.*"time":/, 'the provider itself writes JSON');
  assert.deepEqual(lines.map(humanLine), [
    '[provider] listening on http://127.0.0.1:8787',
    '[provider] WARN: a demo model is served (model=spam, version=2)',
    '[provider] WARN: WebSocket connection refused: 429 Too Many Requests (kind=connection_refused_429, address=10.0.0.1)',
  ]);
});

test('lines that are not a JSON object pass as they are', () => {
  for (const line of ['spam: 25%', '', '[1,2]', 'null', '42', '{"unterminated']) assert.equal(humanLine(line), line);
});

test('humanLog reads a stream line by line, a line split across chunks too', async () => {
  const from = new PassThrough();
  const to = new PassThrough();
  let out = '';
  to.on('data', (d: Buffer) => (out += d.toString()));
  humanLog(from, to);
  const [line] = providerLines((log) => log('shutting down'));
  from.write(line.slice(0, 10));
  from.end(`${line.slice(10)}\nplain text\n`);
  await new Promise((r) => setImmediate(r));
  assert.equal(out, '[provider] shutting down\nplain text\n');
});
