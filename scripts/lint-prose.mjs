#!/usr/bin/env node
// Documents and code comments describe the code as it is, not when or in
// which piece of work it changed: no Markdown file and no comment names a
// calendar date, a work session or a tracking number. Dates and numbers the
// code needs (test data, user-facing strings) are not comments, and dated
// bench result files, generated changelogs and test fixtures are skipped.
//
// node scripts/lint-prose.mjs [FILE...]   (default: every file git knows)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const MONTH = '(?:January|February|March|April|May|June|July|August|September|October|November|December)';

/**
 * What a document or comment must not say. The Unix and zip epochs are
 * constants of formats, not history. A bare "this session" is checked in
 * Markdown only: in code comments a session is the protocol's.
 */
export const RULES = [
  { name: 'date', re: /\b(?!1970-01-01|1980-01-01)(?:19|20)\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b/ },
  { name: 'date', re: new RegExp(`\\b${MONTH} \\d{1,2}(?:st|nd|rd|th)?,? \\d{4}\\b|\\b\\d{1,2} ${MONTH} \\d{4}\\b`) },
  {
    name: 'session',
    re: /\bthe (?:evening|night|morning|afternoon) of\b|\blater that (?:night|day|evening|morning)\b|\b(?:last|to)night\b|\bthis (?:stop|evening|morning|afternoon)\b|\bthis (?:work |helper )session\b|\b(?:stop|session) \d+\b/i,
  },
  { name: 'session', re: /\bthis session\b(?!['’]s)/i, markdownOnly: true },
  { name: 'tracking number', re: /(?:^|[\s([,;])#\d+\b|\bissues? #?\d+\b|\b(?:PR|pull request) #?\d+\b/i },
];

const SKIP = [/^bench\/results\//, /(^|\/)CHANGELOG[^/]*$/, /(^|\/)fixtures\//, /(^|\/)node_modules\//];
const TS_LIKE = /\.(?:[cm]?[jt]sx?)$/;
const C_LIKE = /\.(?:c|cc|cpp|h|hpp|php|css)$/;
const HASH = /\.(?:py|sh|toml|ya?ml)$/;

/** Comments of a TypeScript or JavaScript file, from its syntax tree (so regex and template literals are not misread). */
function tsComments(text, file) {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const seen = new Map();
  const collect = (ranges) => {
    for (const r of ranges ?? []) seen.set(r.pos, text.slice(r.pos, r.end));
  };
  const visit = (node) => {
    collect(ts.getLeadingCommentRanges(text, node.pos));
    collect(ts.getTrailingCommentRanges(text, node.end));
    ts.forEachChild(node, visit);
  };
  visit(source);
  collect(ts.getLeadingCommentRanges(text, source.endOfFileToken.pos));
  return [...seen].map(([pos, body]) => ({ pos, body }));
}

/** Comments of C-like text (`//`, `/* *\/`, and `#` when `hash`), skipping string and character literals. */
function cComments(text, hash) {
  const out = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'") {
      for (i++; i < text.length && text[i] !== c && text[i] !== '\n'; i++) if (text[i] === '\\') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out.push({ pos: i, body: text.slice(i, stop) });
      i = stop - 1;
    } else if ((c === '/' && text[i + 1] === '/') || (hash && c === '#')) {
      const end = text.indexOf('\n', i);
      const stop = end < 0 ? text.length : end;
      out.push({ pos: i, body: text.slice(i, stop) });
      i = stop;
    }
  }
  return out;
}

/** Python docstrings are documentation too. */
function docstrings(text) {
  return [...text.matchAll(/("""|''')[\s\S]*?\1/g)].map((m) => ({ pos: m.index, body: m[0] }));
}

/** The parts of a file that are prose: all of a Markdown file, the comments of code. */
export function proseOf(file, text) {
  if (file.endsWith('.md')) return [{ pos: 0, body: text }];
  if (TS_LIKE.test(file)) return tsComments(text, file);
  if (C_LIKE.test(file)) return cComments(text, file.endsWith('.php'));
  if (HASH.test(file))
    return [
      ...cComments(text, true).filter((c) => c.body.startsWith('#')),
      ...(file.endsWith('.py') ? docstrings(text) : []),
    ];
  if (file.endsWith('.html')) return [...text.matchAll(/<!--[\s\S]*?-->/g)].map((m) => ({ pos: m.index, body: m[0] }));
  return [];
}

/** Every rule broken in a file: line number, rule and the offending line. */
export function findHits(file, text) {
  const hits = [];
  const rules = RULES.filter((r) => !r.markdownOnly || file.endsWith('.md'));
  for (const { pos, body } of proseOf(file, text)) {
    const firstLine = text.slice(0, pos).split('\n').length;
    body.split('\n').forEach((line, k) => {
      for (const rule of rules) {
        const m = line.match(rule.re);
        if (m) hits.push({ line: firstLine + k, rule: rule.name, match: m[0].trim(), text: line.trim() });
      }
    });
  }
  return hits;
}

function trackedFiles(root) {
  const git = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  });
  if (git.status !== 0) throw new Error(`git ls-files failed: ${git.stderr}`);
  return git.stdout.split('\n').filter(Boolean);
}

function main() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const args = process.argv.slice(2);
  const files = (args.length ? args : trackedFiles(root)).filter((f) => !SKIP.some((re) => re.test(f)));
  let count = 0;
  for (const file of files) {
    const abs = path.resolve(root, file);
    if (!fs.existsSync(abs) || !fs.statSync(abs).isFile()) continue;
    for (const hit of findHits(file, fs.readFileSync(abs, 'utf8'))) {
      count++;
      console.error(`${file}:${hit.line}: names a ${hit.rule} ("${hit.match}"): ${hit.text.slice(0, 160)}`);
    }
  }
  if (count) {
    console.error(
      `lint-prose: ${count} line(s) name a date, a session or a tracking number. Say what the code does and why; ` +
        'figures go to bench/results, tried-and-dropped designs to docs/design-notes.md.',
    );
    process.exit(1);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
