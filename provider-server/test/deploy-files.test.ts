// The deploy files that cannot run here stay true to the code: the
// Prometheus rules query only metrics and labels the server exports, the
// systemd units pass `systemd-analyze verify` and start commands and
// settings the code has, and the container image copies every source file
// the server's build needs (docker cannot build on this machine, so what the
// build would find is checked instead).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import yaml from 'js-yaml';
import { tempDir } from '../../scripts/test/temp-dir.js';
import { exportedMetrics } from './exported-metrics.js';

const DEPLOY = 'provider-server/deploy';
const read = (f: string): string => fs.readFileSync(path.join(DEPLOY, f), 'utf8');

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: { severity: string };
  annotations: { summary: string; description?: string };
}

test('the alert rules parse, and query only metrics and labels the server exports', async () => {
  const doc = yaml.load(read('alerts.yml')) as { groups: { name: string; rules: Rule[] }[] };
  const rules = doc.groups.flatMap((g) => g.rules);
  assert.ok(rules.length >= 8, `${rules.length} rules`);
  const exported = await exportedMetrics();
  // Labels Prometheus adds to every series, and `up`, the series it makes for each scrape.
  const scrapeLabels = ['instance', 'job'];
  const queried = new Set<string>();
  for (const r of rules) {
    assert.match(r.alert, /^Pmf[A-Za-z]+$/);
    assert.ok(['critical', 'warning', 'info'].includes(r.labels.severity), `${r.alert}: severity ${r.labels.severity}`);
    assert.ok(r.annotations.summary, `${r.alert}: no summary`);
    if (r.for !== undefined) assert.match(r.for, /^\d+[smh]$/, `${r.alert}: for`);
    for (const [open, close] of ['()', '{}', '[]'])
      assert.equal(r.expr.split(open).length, r.expr.split(close).length, `${r.alert}: unbalanced ${open}${close}`);
    const names = r.expr.match(/\bpmf_[a-z0-9_]+/g) ?? [];
    assert.ok(names.length > 0 || /^up\{/.test(r.expr), `${r.alert} queries no provider metric`);
    for (const name of names) {
      queried.add(name);
      assert.ok(exported.has(name), `${r.alert} queries ${name}, which the server does not export`);
    }
    const labelsOf = new Set([...scrapeLabels, ...names.flatMap((n) => exported.get(n) ?? [])]);
    // Label matchers of each selector, and the labels aggregations keep.
    for (const m of r.expr.matchAll(/\b(pmf_[a-z0-9_]+)\{([^}]*)\}/g))
      for (const matcher of m[2].split(',')) {
        const label = matcher.trim().split(/[=!~]/)[0];
        assert.ok(exported.get(m[1])!.includes(label), `${r.alert}: ${m[1]} has no label ${label}`);
      }
    for (const m of r.expr.matchAll(/\bby \(([^)]*)\)/g))
      for (const label of m[1].split(',').map((l) => l.trim()))
        assert.ok(labelsOf.has(label), `${r.alert}: aggregates by ${label}, which its metrics do not have`);
  }
  assert.equal(new Set(rules.map((r) => r.alert)).size, rules.length, 'alert names are unique');
  // The failures an operator must hear about: workers, store, memory, errors.
  for (const name of [
    'pmf_worker_restarts_total',
    'pmf_store_errors_total',
    'pmf_store_seconds_bucket',
    'pmf_worker_memory_bytes',
    'pmf_errors_total',
  ])
    assert.ok(queried.has(name), `no rule on ${name}`);
});

/** `Environment=NAME=value` settings and the ExecStart command line of a unit file. */
function unit(file: string): { env: Map<string, string>; exec: string[] } {
  const text = read(file);
  const env = new Map([...text.matchAll(/^Environment=([A-Z_]+)=(.*)$/gm)].map((m) => [m[1], m[2]]));
  const exec = /^ExecStart=(.*)$/m.exec(text)![1].split(/\s+/);
  return { env, exec };
}

/** Every source file of provider-server/src, and the repository files they import, transitively. */
function serverSources(): Set<string> {
  const seen = new Set<string>();
  const queue = fs
    .readdirSync('provider-server/src', { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|mjs)$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
  while (queue.length > 0) {
    const file = path.normalize(queue.pop()!);
    if (seen.has(file)) continue;
    seen.add(file);
    for (const m of fs.readFileSync(file, 'utf8').matchAll(/(?:from|import\()\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = path.join(path.dirname(file), m[1]);
      const ts = target.replace(/\.js$/, '.ts');
      // Emscripten's glue (wasm/build) is a build output; everything else must be a source file.
      queue.push(fs.existsSync(ts) ? ts : target);
    }
  }
  return seen;
}

test('the systemd units verify, and run commands and settings the server has', (t) => {
  const dir = tempDir('pmf-units-');
  // A template is verified as an instance of it.
  fs.copyFileSync(path.join(DEPLOY, 'pmf-provider@.service'), path.join(dir, 'pmf-provider@8787.service'));
  fs.copyFileSync(path.join(DEPLOY, 'pmf-lmtp.service'), path.join(dir, 'pmf-lmtp.service'));
  const verify = spawnSync('systemd-analyze', ['verify', 'pmf-provider@8787.service', 'pmf-lmtp.service'], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (verify.error) t.diagnostic(`systemd-analyze is not installed: ${verify.error.message}`);
  else assert.deepEqual([verify.status, verify.stdout + verify.stderr], [0, '']);

  const source = [...serverSources()].map((f) => fs.readFileSync(f, 'utf8')).join('\n');
  for (const [file, command] of [
    ['pmf-provider@.service', 'serve'],
    ['pmf-lmtp.service', 'lmtp'],
  ]) {
    const { env, exec } = unit(file);
    assert.equal(exec[0], '/usr/bin/node');
    // The compiled CLI (npm run build:server writes dist/server/<source path>.js).
    assert.match(exec[1], /^dist\/server\/(.+)\.js$/);
    assert.ok(
      fs.existsSync(exec[1].replace(/^dist\/server\/(.+)\.js$/, '$1.ts')),
      `${file}: ${exec[1]} is built from nothing`,
    );
    assert.equal(exec[2], command);
    for (const name of env.keys())
      if (name.startsWith('PMF_')) assert.ok(source.includes(name), `${file} sets ${name}, which nothing reads`);
  }
  assert.equal(unit('pmf-provider@.service').env.get('PMF_TRUSTED_PROXIES'), '127.0.0.1', 'HAProxy on this host');
});

test('the container image copies every source file the server build needs, and runs the compiled CLI', () => {
  const text = read('Containerfile');
  const copies = [...text.matchAll(/^COPY (--from=\S+ )?(.+)$/gm)].map((m) => ({
    from: m[1]?.trim(),
    paths: m[2].trim().split(/\s+/),
  }));
  const sources: string[] = [];
  for (const c of copies) {
    const srcs = c.paths.slice(0, -1);
    if (c.from) {
      // From the build stage: the build's outputs or files it copied in.
      for (const s of srcs) {
        const rel = s.replace(/^\/src\//, '');
        assert.ok(
          ['node_modules', 'dist/server'].includes(rel) || fs.existsSync(rel),
          `${s} is neither a build output nor in the repository`,
        );
      }
    } else {
      for (const s of srcs) assert.ok(fs.existsSync(s), `COPY ${s}: not in the repository`);
      sources.push(...srcs);
    }
  }
  const copied = (file: string): boolean =>
    sources.some((s) => file === s || file.startsWith(s.endsWith('/') ? s : `${s}/`));
  for (const script of ['build-wasm.mjs', 'build-native.mjs', 'build-server.mjs'])
    assert.match(text, new RegExp(`node scripts/${script.replace('.', '\\.')}`));
  const missing = [...serverSources()].filter((f) => !f.startsWith('wasm/build/') && !copied(f));
  assert.deepEqual(missing, [], 'source files the build imports but the image does not copy');
  assert.ok(copied('provider-server/native/sodium.c') && copied('provider-server/native/ot-base/Cargo.lock'));
  assert.ok(copied('wasm/src'), 'the WebAssembly core is built from wasm/src');
  assert.ok(copied('tsconfig.json'), 'provider-server/tsconfig.build.json extends it');
  const entry = JSON.parse(/^ENTRYPOINT (.*)$/m.exec(text)![1]) as string[];
  assert.ok(fs.existsSync(entry[1].replace(/^dist\/server\/(.+)\.js$/, '$1.ts')), `${entry[1]} is built from nothing`);
  assert.deepEqual(JSON.parse(/^CMD (.*)$/m.exec(text)![1]), ['serve', '--config', '/etc/pmf/provider.json']);
});
