// A provider whose files were damaged must refuse to start, naming the file,
// instead of starting "healthy" and failing every request: a store page, a
// key file, a package whose bytes changed, a versions list. A store it cannot
// write (a read-only data directory) also stops the start, saying so rather
// than calling the file damaged.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import { startProvider } from '../src/provider.js';
import { mountsMissing, readOnly } from './mounts.js';
import { loopbackConfig } from './real-provider.js';
import { tempDir } from '../../scripts/test/temp-dir.js';

let pristine: string;

const configFor = (dataDir: string) => loopbackConfig(dataDir);
const quiet = { log: () => undefined, progress: () => undefined };

before(async () => {
  pristine = tempDir('pmf-integrity-');
  const p = await startProvider(configFor(pristine), quiet);
  for (let u = 0; u < 40; u++) {
    const { userId } = await p.store.addUser(`user-${u}`);
    for (let i = 0; i < 20; i++)
      await p.store.deliver(userId, `m-${u}-${i}`, `Subject: ${i}\r\n\r\n${'x'.repeat(200)}`);
  }
  await p.close();
});

/** A copy of the pristine data directory with one file damaged. */
function damaged(file: string, damage: (f: string) => void): string {
  const dir = tempDir('pmf-integrity-');
  fs.cpSync(pristine, dir, { recursive: true });
  damage(path.join(dir, file));
  return dir;
}

async function refusesNaming(dataDir: string, file: string, reason: RegExp): Promise<void> {
  await assert.rejects(startProvider(configFor(dataDir), quiet), (e: Error) => {
    assert.ok(e.message.includes(path.join(dataDir, file)), e.message);
    assert.match(e.message, reason);
    return true;
  });
}

test('an undamaged copy starts', async () => {
  const p = await startProvider(configFor(damaged('store.db', () => undefined)), quiet);
  await p.close();
});

test('a package whose bytes changed on disk stops the start', async () => {
  const file = 'models/spam/v1.pmf';
  const dir = damaged(file, (f) => {
    const fd = fs.openSync(f, 'r+');
    fs.writeSync(fd, Buffer.from([0x5a]), 0, 1, fs.fstatSync(fd).size - 7);
    fs.closeSync(fd);
  });
  await refusesNaming(dir, file, /changed on disk/);
});

test('a garbage key file stops the start', async () => {
  const file = 'models/spam/v1.key';
  const dir = damaged(file, (f) => fs.writeFileSync(f, Buffer.alloc(fs.statSync(f).size, 0xff), { mode: 0o600 }));
  await refusesNaming(dir, file, /not a valid secret key/);
});

test('a damaged store page stops the start', async () => {
  const dir = damaged('store.db', (f) => {
    const fd = fs.openSync(f, 'r+');
    const size = fs.fstatSync(fd).size;
    assert.ok(size >= 5 * 4096, `store has ${size} bytes`);
    fs.writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, 3 * 4096);
    fs.closeSync(fd);
  });
  await refusesNaming(dir, 'store.db', /damaged/);
});

test('a garbled versions list stops the start', async () => {
  const file = 'models/spam/versions.json';
  const dir = damaged(file, (f) => fs.writeFileSync(f, '[{"version": 1,'));
  await refusesNaming(dir, file, /not a list of versions/);
});

describe('a read-only data directory', { skip: mountsMissing() }, () => {
  test('stops the start saying the store cannot be written, not that it is damaged', async () => {
    const dir = damaged('store.db', () => undefined);
    for (const f of fs.readdirSync(dir)) if (/^store\.db-/.test(f)) fs.rmSync(path.join(dir, f)); // a cleanly stopped store
    readOnly(dir);
    await assert.rejects(startProvider(configFor(dir), quiet), (e: Error) => {
      assert.ok(e.message.includes(path.join(dir, 'store.db')), e.message);
      assert.match(e.message, /read-only/);
      assert.doesNotMatch(e.message, /damaged|backup/);
      return true;
    });
  });
});
