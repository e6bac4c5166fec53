// The repository stands on its own and its documentation stays navigable:
// every relative Markdown link and every `docs/<file>.md#<anchor>` citation in
// code resolves to a file and a heading, and nothing cites the design notes
// that live outside the repository.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const SKIP = new Set(['node_modules', '.git', 'dist', 'build', '.venv', '.data', 'test-results', 'report']);
const SOURCE = /\.(ts|mts|mjs|js|cpp|h|py|md|sh|json)$/;

function files(dir = '.'): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return SKIP.has(e.name) || e.name.startsWith('.') ? [] : files(p);
    return SOURCE.test(e.name) ? [p] : [];
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^(```|~~~)/.test(line)) fenced = !fenced;
    const m = !fenced && line.match(/^#{1,6}\s+(.*?)\s*#*\s*$/);
    if (!m) continue;
    const base = m[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

const all = files();
const anchorCache = new Map<string, Set<string>>();
const anchorsOf = (file: string) => {
  if (!anchorCache.has(file)) anchorCache.set(file, anchors(fs.readFileSync(file, 'utf8')));
  return anchorCache.get(file)!;
};

/** Problems with one link target (a path relative to `from`'s folder, or to the root for citations). */
function check(target: string, fromDir: string): string | undefined {
  const [rel, anchor] = target.split('#');
  const file = rel === '' ? undefined : path.normalize(path.join(fromDir, rel));
  if (file !== undefined && !fs.existsSync(file)) return `${target}: no such file`;
  if (anchor === undefined || anchor === '') return undefined;
  if (file !== undefined && !file.endsWith('.md')) return undefined;
  return anchorsOf(file ?? '').has(anchor.toLowerCase()) ? undefined : `${target}: no such heading`;
}

test('relative links in Markdown resolve to files and headings', () => {
  const broken: string[] = [];
  for (const md of all.filter((f) => f.endsWith('.md'))) {
    const text = fs.readFileSync(md, 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue; // http:, mailto:
      const problem = target.startsWith('#')
        ? anchorsOf(md).has(target.slice(1)) || `${target}: no such heading`
        : check(target, path.dirname(md));
      if (typeof problem === 'string') broken.push(`${md}: ${problem}`);
    }
  }
  assert.deepEqual(broken, []);
});

test('docs citations in code name existing files and headings', () => {
  const broken: string[] = [];
  let cited = 0;
  for (const f of all.filter((x) => !x.endsWith('.md'))) {
    for (const [target] of fs.readFileSync(f, 'utf8').matchAll(/docs\/[a-z0-9-]+\.md(#[a-z0-9_-]+)?/g)) {
      cited++;
      const problem = check(target, '.');
      if (problem) broken.push(`${f}: ${problem}`);
    }
  }
  assert.ok(cited > 10, `only ${cited} citations found: is the pattern still right?`);
  assert.deepEqual(broken, []);
});

test('nothing cites design notes outside the repository', () => {
  const outside = all.filter((f) => !f.startsWith('docs/test') && /PROTOCOL\.md/.test(fs.readFileSync(f, 'utf8')));
  assert.deepEqual(outside, []);
});
