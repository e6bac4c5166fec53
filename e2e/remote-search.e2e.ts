// Search of all mail from a new device, in Debian Chromium (docs/remote-search.md):
// one profile imports Alice's key, connects to a real provider-server and
// indexes her webmail mailbox, which adds each decrypted message to the
// encrypted index at the provider; a fresh profile with only her imported key
// (and the provider's address and token) then finds a message by a word of
// its encrypted body in the search page's "All mail" scope, opens it
// decrypted through the webmail, and the provider's store, scanned byte by
// byte, holds none of the mail's words in plain text.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { makeParty, pgpMimeMessage, type Party } from '../extension/test/mail-fixtures.js';
import type { Provider } from '../provider-server/src/provider.js';
import { importAndUnlock, screenshot, type ExtensionBrowser } from './fixtures/browser.js';
import { clickClosedButton, MAILBOX_BAR, viewerFrame, waitForClosed, waitForStatus } from './fixtures/closed-ui.js';
import { startLoopbackProvider } from './fixtures/provider.js';
import { browserForProvider, connectWithToken } from './fixtures/provider-connect.js';
import { stopAll } from './fixtures/process.js';

/** Alice's mail: subjects and bodies of words found nowhere else. */
const MAIL = [
  ['rs-1', 'Quokka itinerary', 'The quokka itinerary for Rottnest leaves at dawn.'],
  ['rs-2', 'Marmot census', 'Marmot census figures arrived; the tally is lower.'],
  ['rs-3', 'Narwhal invoice', 'Please settle the narwhal invoice by Thursday.'],
  ['rs-4', 'Axolotl lab notes', 'Axolotl regeneration notes from the wetlab.'],
] as const;
const WORDS = [
  'quokka',
  'itinerary',
  'rottnest',
  'marmot',
  'census',
  'narwhal',
  'invoice',
  'axolotl',
  'regeneration',
  'wetlab',
];

let dir: string;
let provider: Provider;
let alice: Party;
let account: { userId: number; token: string };
let first: ExtensionBrowser;
let second: ExtensionBrowser | undefined;

before(
  async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-remote-search-e2e-'));
    provider = await startLoopbackProvider(path.join(dir, 'provider'));
    account = await provider.store.addUser('alice');
    alice = await makeParty('Alice', 'alice@example.org');
    const bob = await makeParty('Bob', 'bob@example.org');
    for (const [id, subject, body] of MAIL)
      await provider.store.deliver(account.userId, id, await pgpMimeMessage(bob, alice, subject, body));
    first = await browserForProvider(provider);
  },
  { timeout: 300_000 },
);

after(() => stopAll(dir, first, second, provider));

/** Connects the profile to the provider and logs it in to the webmail, as Alice would. */
async function connect(browser: ExtensionBrowser, page: Page, token: string): Promise<void> {
  await page.goto(browser.extensionUrl('options.html'));
  await connectWithToken(page, provider.server.httpUrl, token);
  await page.locator('#provider-status[data-connected=true]').waitFor({ timeout: 120_000 });
  // Not what this suite is about: no spam check, so no message moves to Junk meanwhile.
  await page.locator('#spam-check').uncheck();
  await page.goto(`${provider.server.httpUrl}/mail`);
  await page.locator('input[name=token]').fill(token);
  await page.locator('form.login button').click();
  await page.locator('tr.message-row').first().waitFor();
}

const count = async (table: string): Promise<number> =>
  Number((await provider.store.sql().all<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`, []))[0].n);

describe('search of all mail from a new device', { timeout: 900_000 }, () => {
  it('the first device indexes the mailbox; each message lands in the encrypted index once', async () => {
    const page = await first.context.newPage();
    await importAndUnlock(first, page, alice.privateArmored, alice.passphrase);
    await connect(first, page, account.token);
    await page.goto(`${provider.server.httpUrl}/mail`);
    await waitForClosed(page, () => true, 30_000, MAILBOX_BAR);
    await clickClosedButton(page, MAILBOX_BAR);
    await waitForClosed(page, (b) => b.state === 'done', 120_000, MAILBOX_BAR);
    // Sent in the background, in one batch a moment after the last message.
    for (let i = 0; (await count('ri_docs')) < MAIL.length; i++) {
      assert.ok(i < 120, `the provider holds ${await count('ri_docs')} of ${MAIL.length} messages`);
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(await count('ri_docs'), MAIL.length);
    assert.ok((await count('ri_entries')) >= 16 * MAIL.length, 'padded entries');
    await screenshot(page, 'remote-search-indexed');
  });

  it('a fresh profile with only the imported key finds a message by a word of its body and opens it decrypted', async () => {
    second = await browserForProvider(provider);
    const page = await second.context.newPage();
    await importAndUnlock(second, page, alice.privateArmored, alice.passphrase);
    await connect(second, page, await provider.store.issueToken(account.userId));
    const search = await second.context.newPage();
    await search.goto(second.extensionUrl('search.html?scope=all&q=narwhal'));
    const status = search.locator('#search-status');
    const hits = search.locator('#results .hit');
    await hits
      .first()
      .waitFor({ timeout: 60_000 })
      .catch(async (e) => {
        await screenshot(search, 'remote-search-failed');
        throw new Error(`no results; the page says: ${await status.textContent()} (${e})`);
      });
    assert.equal(await hits.count(), 1);
    assert.equal(await hits.locator('a.hit-subject').textContent(), 'Narwhal invoice');
    assert.match((await status.textContent()) ?? '', /^1 message of all your mail matches/);
    // Nothing was indexed on this device: the local scope finds nothing.
    await search.locator('input[name=scope][value=device]').check();
    await search.locator('#search-status', { hasText: /indexed messages match|Unlock/ }).waitFor({ timeout: 30_000 });
    assert.equal(await hits.count(), 0);
    await search.locator('input[name=scope][value=all]').check();
    await hits.first().waitFor({ timeout: 30_000 });
    await screenshot(search, 'remote-search-results');

    const [opened] = await Promise.all([second.context.waitForEvent('page'), hits.locator('a.hit-subject').click()]);
    await waitForStatus(opened, (st) => st.status === 'decrypted');
    const viewer = await viewerFrame(opened);
    await viewer.locator('#text').filter({ hasText: 'narwhal' }).waitFor({ timeout: 20_000 });
    assert.equal(
      (await viewer.locator('#text').textContent())?.trim(),
      'Please settle the narwhal invoice by Thursday.',
    );
    await screenshot(opened, 'remote-search-opened');
  });

  it('the provider’s store holds no word of the mail in plain text', async () => {
    const files = fs.readdirSync(path.join(dir, 'provider')).filter((f) => f.startsWith('store.db'));
    assert.ok(files.includes('store.db'));
    const bytes = Buffer.concat(files.map((f) => fs.readFileSync(path.join(dir, 'provider', f))));
    for (const word of [...WORDS, ...MAIL.map((m) => m[1])])
      for (const form of [word, word.toUpperCase(), word[0].toUpperCase() + word.slice(1)])
        for (const encoding of ['utf8', 'utf16le'] as const)
          assert.equal(
            bytes.indexOf(Buffer.from(form, encoding)),
            -1,
            `"${form}" (${encoding}) is in the provider's store`,
          );
    // The scan can fail: the delivered messages' outer headers are in the same file, in plain text.
    assert.ok(bytes.includes(Buffer.from('bob@example.org')));
  });
});
