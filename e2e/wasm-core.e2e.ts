// The browser proof of the one WASM build: the WASM core runs in a Web Worker of the
// extension (options page status line) and of a plain localhost web page.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ABI_VERSION } from '../wasm/ts/core.js';
import { launchWithExtension, root, screenshot, type ExtensionBrowser } from './fixtures/browser.js';
import { startServer } from './fixtures/webmail-server.js';

let browser: ExtensionBrowser;
before(
  async () => {
    browser = await launchWithExtension();
  },
  { timeout: 180_000 },
); // includes building dist/ when stale
after(async () => browser?.close());

describe('WASM core in the browser', { timeout: 120_000 }, () => {
  it('the extension worker instantiates pmf_core and runs its exports (options page status line)', async () => {
    const page = await browser.context.newPage();
    await page.goto(browser.extensionUrl('options.html'));
    const status = page.locator('#wasm-status');
    await status.and(page.locator('[data-state=ok], [data-state=failed]')).waitFor({ timeout: 30_000 });
    const text = (await status.textContent()) ?? '';
    await screenshot(page, 'options-wasm-status');
    assert.equal(await status.getAttribute('data-state'), 'ok', text);
    assert.equal(text, 'The search and spam engine is ready.');
    // The figures are for a bug report: behind the Technical details disclosure.
    const figures = (await page.locator('#wasm-details pre').textContent()) ?? '';
    assert.ok(figures.includes(`abi ${ABI_VERSION} (expected ${ABI_VERSION})`), figures);
    assert.match(figures, /pmf_ct_memeq equal=1 flipped=0/);
    assert.equal(await page.locator('#wasm-details pre').isVisible(), false, 'folded away until asked for');

    // Key generation on the same page, with its progress bar.
    const form = page.locator('#generate');
    await form.locator('input[name=name]').fill('Carol');
    await form.locator('input[name=email]').fill('carol@example.org');
    // An easily guessed passphrase is refused, with advice shown while typing and on submit.
    await form.locator('input[name=passphrase]').fill('password1234');
    await page.locator('#passphrase-advice[data-kind=warn]', { hasText: 'too easy to guess' }).waitFor();
    await form.locator('input[name=confirm]').fill('password1234');
    await form.locator('button[type=submit]').click();
    await page.locator('#generate-status[data-kind=error]').filter({ hasText: 'too easy to guess' }).waitFor();
    const strong = 'violet kettle harbour dusk';
    await form.locator('input[name=passphrase]').fill(strong);
    assert.equal(await page.locator('#passphrase-advice').isHidden(), true, 'no advice for a strong passphrase');
    await form.locator('input[name=confirm]').fill(`${strong}!`);
    await form.locator('button[type=submit]').click();
    await page.locator('#generate-status[data-kind=error]').filter({ hasText: 'do not match' }).waitFor();
    await form.locator('input[name=confirm]').fill(strong);
    await form.locator('button[type=submit]').click();
    await page.locator('#generate-status[data-kind=ok]').waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('#generate-progress').isHidden(), true, 'progress bar hides when done');
    // The key list re-renders after the success line: wait for the new row.
    const row = page.locator('#keys tbody tr', { hasText: 'Carol <carol@example.org>' });
    await row.waitFor();
    assert.match(
      (await row.textContent()) ?? '',
      /Carol <carol@example.org>.*Your key \(private and public\) · Ed25519/s,
    );
    await row.locator('button', { hasText: 'Export public key' }).click();
    // The status line is written after the textarea is filled.
    await page.locator('#keys-status[data-kind=ok]', { hasText: 'Public key of' }).waitFor();
    assert.match(await page.locator('#export-out').inputValue(), /^-----BEGIN PGP PUBLIC KEY BLOCK-----/);
    assert.doesNotMatch(await page.locator('#export-out').inputValue(), /PRIVATE/);
    await screenshot(page, 'options-generated');
    await page.close();
  });

  it('the same pmf_core.js loads in a dedicated worker of a plain localhost page', async () => {
    const core = fs.readFileSync(path.join(root, 'wasm/build/pmf_core.js'));
    const files: Record<string, [string, string | Buffer]> = {
      '/': [
        'text/html',
        '<!doctype html><title>worker</title><pre id="out">running</pre><script src="/page.js"></script>',
      ],
      '/page.js': [
        'text/javascript',
        `const w = new Worker('/worker.js');
         w.onmessage = (e) => { document.getElementById('out').textContent = JSON.stringify(e.data); };
         w.onerror = (e) => { document.getElementById('out').textContent = JSON.stringify({ error: e.message }); };`,
      ],
      '/worker.js': [
        'text/javascript',
        `importScripts('/pmf_core.js');
         createPmfCore().then((m) => {
           const a = m._malloc(16), b = m._malloc(16);
           m.HEAPU8.fill(7, a, a + 16); m.HEAPU8.fill(7, b, b + 16);
           const same = m._pmf_ct_memeq(a, b, 16);
           m.HEAPU8[b + 15] = 8;
           postMessage({ abi: m._pmf_abi_version(), same, flipped: m._pmf_ct_memeq(a, b, 16), inWorker: typeof window === 'undefined' });
         }, (e) => postMessage({ error: String(e) }));`,
      ],
      '/pmf_core.js': ['text/javascript', core],
    };
    const server = await startServer((req, res) => {
      const f = files[req.url ?? ''];
      if (!f) return false;
      // A strict page CSP: the module needs only 'wasm-unsafe-eval'.
      res.writeHead(200, {
        'content-type': f[0],
        'content-security-policy': "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'",
      });
      res.end(f[1]);
      return true;
    });
    try {
      const page = await browser.context.newPage();
      await page.goto(`${server.origin}/`);
      await page.locator('#out').filter({ hasNotText: 'running' }).waitFor({ timeout: 30_000 });
      const result = JSON.parse((await page.locator('#out').textContent()) ?? '{}');
      await screenshot(page, 'plain-page-worker');
      assert.deepEqual(result, { abi: ABI_VERSION, same: 1, flipped: 0, inWorker: true });
      await page.close();
    } finally {
      await server.close();
    }
  });
});
