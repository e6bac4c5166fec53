// The evaluation report (npm run report) builds from saved bench rows (the fixture,
// real quick-run rows with notes dropped), every figure has data, and the
// page shows every figure when opened from disk in Chromium.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium, root, screenshot } from './fixtures/browser.js';

const out = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-report-'));
const figuresDir = path.join(out, 'figures');
let browser: Browser;

before(
  async () => {
    const res = spawnSync(
      process.execPath,
      ['--import', 'tsx', 'scripts/report.ts', '--from', 'e2e/fixtures/bench-rows.jsonl', '--out', out],
      { cwd: root, encoding: 'utf8' },
    );
    assert.equal(res.status, 0, `${res.stdout}\n${res.stderr}`);
    browser = await launchChromium();
  },
  { timeout: 120_000 },
);
after(async () => {
  await browser?.close();
  fs.rmSync(out, { recursive: true, force: true });
});

const figureIds = () =>
  fs
    .readdirSync(figuresDir)
    .filter((f) => f.endsWith('.svg'))
    .map((f) => f.slice(0, -4));

describe('evaluation report', { timeout: 60_000 }, () => {
  it('renders every figure as an SVG with data marks and a CSV with rows', () => {
    const ids = figureIds();
    assert.ok(ids.length >= 15, `only ${ids.length} figures: ${ids.join(', ')}`);
    for (const id of ids) {
      const svg = fs.readFileSync(path.join(figuresDir, `${id}.svg`), 'utf8');
      // vega draws each bar, line or point as a path inside a role-mark group.
      assert.match(svg, /class="mark-(rect|line|symbol) role-mark[^"]*"[^>]*><path/, `${id}.svg has no data marks`);
      const csv = fs
        .readFileSync(path.join(figuresDir, `${id}.csv`), 'utf8')
        .trim()
        .split('\n');
      assert.ok(csv.length > 1, `${id}.csv has no rows`);
    }
    assert.ok(fs.existsSync(path.join(figuresDir, 'accuracy-table.csv')));
  });

  it('shows every figure, its source and its data link when opened from disk', async () => {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    // A self-contained page makes no request beyond file://.
    const remote: string[] = [];
    page.on('request', (r) => void (r.url().startsWith('file://') || remote.push(r.url())));
    await page.goto(`file://${path.join(out, 'index.html')}`);
    const ids = figureIds();
    assert.equal(await page.locator('figure').count(), ids.length);
    for (const id of ids) {
      const figure = page.locator(`figure#${id}`);
      const img = figure.locator('img');
      await img.scrollIntoViewIfNeeded();
      const shown = await img.evaluate((el: HTMLImageElement) => el.complete && el.naturalWidth > 0);
      assert.ok(shown, `${id}: the SVG does not load`);
      assert.match((await figure.locator('.source').textContent()) ?? '', /Pretzel: .*bench rows: \S+/s);
      assert.equal(await figure.locator(`a[href="figures/${id}.csv"]`).count(), 1);
    }
    assert.ok((await page.locator('#accuracy-table tbody tr').count()) > 0, 'the accuracy table has rows');
    assert.deepEqual(remote, []);
    await screenshot(page, 'report');
    await page.close();
  });
});
