import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const core = path.join(path.dirname(fileURLToPath(import.meta.url)), '../core');

test('client/core uses no Node-only API (the extension worker hosts it)', () => {
  const files = (fs.readdirSync(core, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts'));
  assert.ok(
    files.some((f) => f.includes(path.sep)),
    'subfolders are read too',
  );
  for (const f of files) {
    const src = fs.readFileSync(path.join(core, f), 'utf8');
    assert.doesNotMatch(src, /from '(node:|ws'|\.\.\/node\/)|require\(|\bBuffer\b|\bprocess\./, f);
  }
});
