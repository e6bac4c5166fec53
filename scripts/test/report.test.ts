// The report's figure definitions against the fixture rows (a real quick
// run): every figure finds its rows, references land beside this project's
// bars, and case names read as the paper writes parameters.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { caseLabel, FIGURES, OURS, PRETZEL } from '../report/figures.js';
import { toCsv } from '../report/render.js';
import { parseRows, readRows } from '../report/rows.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { rows } = readRows(path.join(root, 'e2e/fixtures/bench-rows.jsonl'));
const byId = (id: string) => FIGURES.find((f) => f.id === id)!;

describe('report figures', () => {
  it('every figure has data in the fixture rows', () => {
    for (const f of FIGURES) assert.ok(f.points(rows).length > 0, `${f.id} has no points`);
  });

  it("puts a row's reference beside it as Pretzel's bar, named by figure", () => {
    const points = byId('spam-network').points(rows);
    assert.deepEqual(
      points.map((p) => [p.series, p.source]),
      [
        [OURS, 'spam/network_per_email bytes'],
        [PRETZEL, 'Pretzel Fig. 8'],
      ],
    );
    // Pretzel's published 19.6 KB per email (the fixture keeps 4 significant digits).
    assert.ok(Math.abs(points[1].value - 19.6) < 0.01, String(points[1].value));
  });

  it('draws a peer as its own series and a shared reference once', () => {
    const cmp = byId('gc-cpu')
      .points(rows)
      .filter((p) => p.label === 'cmp T = 32');
    assert.deepEqual(cmp.map((p) => p.series).sort(), [OURS, 'emp-wasm (peer)', PRETZEL].sort());
  });

  it('labels cases with their parameters', () => {
    assert.equal(caseLabel('client_N200K_L692'), 'client N = 200K, L = 692');
    assert.equal(caseLabel('network_per_email'), 'network per email');
    assert.equal(caseLabel('client_N20K_B2048_B20'), 'client N = 20K, B = 2048, B′ = 20');
  });

  it('skips what is not a bench row in saved output', () => {
    assert.equal(
      parseRows('> npm banner\n{"suite":"x","case":"c","metric":"m","value":1,"unit":"B"}\nwarn\n').length,
      1,
    );
  });

  it('quotes CSV fields that need it', () => {
    assert.equal(
      toCsv(['a', 'b'], [{ a: 'N = 5M, L = 5000', b: 'say "hi"' }]),
      'a,b\n"N = 5M, L = 5000","say ""hi"""\n',
    );
  });
});

describe('report rows from bench/results', () => {
  it('takes the newest row of each suite, case and metric across dated result files', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-results-'));
    try {
      const row = (value: number, metric = 'time_ns') =>
        JSON.stringify({ suite: 'wasm', case: 'call_overhead', metric, value, unit: 'ns', quick: true });
      fs.writeFileSync(path.join(dir, '2026-01-02-bbb.jsonl'), `${row(2)}\n`);
      fs.writeFileSync(path.join(dir, '2026-01-01-aaa.jsonl'), `${row(1)}\n${row(7, 'bytes')}\n`);
      const { rows: merged } = readRows(dir);
      assert.deepEqual(
        merged.map((r) => [r.metric, r.value]),
        [
          ['bytes', 7],
          ['time_ns', 2],
        ],
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
