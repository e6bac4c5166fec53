// scripts/lint-prose.mjs: a date, a work session or a tracking number in a
// document or a code comment fails `npm run lint`; the same words in code
// (test data, user-facing strings) and format epochs do not.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
// @ts-expect-error: a plain ES module without types, run by `npm run lint`
import { findHits } from '../lint-prose.mjs';

type Hit = { line: number; rule: string };
const hits = (file: string, text: string) => (findHits(file, text) as Hit[]).map((h) => `${h.line}:${h.rule}`);

describe('lint-prose', () => {
  it('flags dates, sessions and tracking numbers in Markdown', () => {
    assert.deepEqual(hits('a.md', 'Measured on 2026-11-27.'), ['1:date']);
    assert.deepEqual(hits('a.md', 'ok\nOn 27 November 2026 it got faster.'), ['2:date']);
    assert.deepEqual(hits('a.md', 'Later that night the p99 fell.'), ['1:session']);
    assert.deepEqual(hits('a.md', 'Two runs this stop.'), ['1:session']);
    assert.deepEqual(hits('a.md', 'As of stop 46 it holds.'), ['1:session']);
    assert.deepEqual(hits('a.md', 'Done in this session.'), ['1:session']);
    assert.deepEqual(hits('a.md', 'Write-behind adds (#17)'), ['1:tracking number']);
    assert.deepEqual(hits('a.md', 'see issue 41'), ['1:tracking number']);
  });

  it('flags them in code comments only', () => {
    assert.deepEqual(hits('a.ts', "// fixed the evening of the release\nconst d = '2026-11-27';"), ['1:session']);
    assert.deepEqual(hits('a.ts', "const re = /https?:\\/\\//; // (#39)\nconst s = 'issue 41';"), [
      '1:tracking number',
    ]);
    assert.deepEqual(hits('a.ts', '/**\n * ok\n * since 2024-05-30\n */\nexport {};'), ['3:date']);
    assert.deepEqual(hits('a.cpp', 'int x = 1; // stop 12\nconst char *s = "2026-11-27";'), ['1:session']);
    assert.deepEqual(hits('a.py', 'X = "#37"  # see issue #37\n'), ['1:tracking number']);
  });

  it('lets protocol sessions, epochs, colours and upstream references through', () => {
    assert.deepEqual(hits('a.ts', "// binds KOS to this session's id\n// days since 1970-01-01\nexport {};"), []);
    assert.deepEqual(hits('a.md', 'zip entries dated 1980-01-01; jedisct1/libsodium.js#386; `&#39;`'), []);
    assert.deepEqual(hits('a.css', 'a { color: #222; } /* grey */'), []);
  });

  it('fails the lint run on a bad line and passes a clean file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-prose-'));
    try {
      const bad = path.join(dir, 'bad.md');
      const good = path.join(dir, 'good.md');
      fs.writeFileSync(bad, '# Notes\n\nFigures of 2026-11-27: every target met (issue #17).\n');
      fs.writeFileSync(good, '# Notes\n\nThe figures are in bench/results.\n');
      const run = (file: string) => spawnSync(process.execPath, ['scripts/lint-prose.mjs', file], { encoding: 'utf8' });
      const failed = run(bad);
      assert.equal(failed.status, 1);
      assert.match(failed.stderr, /bad\.md:3: names a date \("2026-11-27"\)/);
      assert.match(failed.stderr, /bad\.md:3: names a tracking number \("\(?issue #17"\)/);
      assert.equal(run(good).status, 0, run(good).stderr);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
