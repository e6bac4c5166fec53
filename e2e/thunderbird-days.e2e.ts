// The days after the first ten minutes, in Debian's Thunderbird ESR, with
// the add-on, an IMAP account on a throwaway Dovecot behind the
// provider's LMTP stage, and provider-server on loopback with a phishing
// blocklist. What real days bring: mail that is already there when the user
// connects, a damaged message, spam in Junk and why it is there, a big
// attachment, a locked key, mail that comes while Thunderbird is closed, a
// provider that goes down and comes back, a token the provider stops
// accepting, a mistyped port. Each is checked as the user sees it (the
// add-on's pages, the banner in the message pane) and on the server (IMAP).
// The screenshot tour's Thunderbird pictures go to test-results/tour/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as openpgp from 'openpgp';
import { encryptText, inlinePgpMessage, makeParty, type Party } from '../extension/test/mail-fixtures.js';
import { BlocklistCatalog } from '../provider-server/src/blocklist.js';
import { lmtpSend } from '../provider-server/src/lmtp/lmtp-client.js';
import { openStore, type Provider } from '../provider-server/src/provider.js';
import { ensureBuilt, root } from './fixtures/browser.js';
import { caughtSpam } from './fixtures/caught-spam.js';
import { startDovecot, type Dovecot } from './fixtures/dovecot.js';
import { startLmtpStage, type RunningStage } from './fixtures/lmtp-stage.js';
import { freePort, stopAll } from './fixtures/process.js';
import { startLoopbackProvider } from './fixtures/provider.js';
import { connectInThunderbird } from './fixtures/provider-connect.js';
import { startAliceThunderbird, thunderbirdSkipReason, type RunningThunderbird } from './fixtures/thunderbird.js';
import { messageBanner, onAddonPage, selectInFolder, showAddonTab, tbScreenshot } from './fixtures/thunderbird-ui.js';

const skip = thunderbirdSkipReason();
let alice: Party, bob: Party;
let dir: string;
let dataDir: string;
let dovecot: Dovecot;
let tb: RunningThunderbird;
let stage: RunningStage;
let provider: Provider;
let port: number;
let aliceId: number;
let aliceToken: string;
/** Spam from the test split that the bundled model catches, handed out one at a time. */
let spam: string[];

/** Delivers through the provider's LMTP stage (which registers the provider's id) to Dovecot. */
async function deliver(raw: string): Promise<void> {
  const reply = await lmtpSend(
    { host: '127.0.0.1', port: stage.port, timeoutMs: 30_000 },
    { from: 'bob@example.org', to: ['alice@example.org'], data: Buffer.from(raw.replace(/\r?\n/g, '\r\n')) },
  );
  assert.equal(reply.data[0]?.code, 250, reply.data[0]?.text);
}

/** A whole message encrypted to Alice inside an inline-PGP mail with the outer subject `subject`. */
async function encryptedMail(subject: string, inner: string): Promise<string> {
  const armored = await openpgp.encrypt({
    message: await openpgp.createMessage({ text: inner }),
    encryptionKeys: alice.publicKey,
  });
  return `From: bob@example.org\r\nTo: alice@example.org\r\nSubject: ${subject}\r\nDate: ${new Date().toUTCString()}\r\n\r\n${armored}`;
}

const deliverSpam = async (subject: string) => deliver(await encryptedMail(subject, spam.shift()!));

/** Subjects in one of Alice's IMAP folders, read on the server. */
const onServer = (folder: string) => dovecot.subjectsIn('alice', folder);

/** Polls `ok` (async) until it holds, or fails with `what` and Thunderbird's output saved. */
async function until(ok: () => Promise<boolean>, what: string, ms = 120_000): Promise<void> {
  for (const end = Date.now() + ms; !(await ok()); await new Promise((r) => setTimeout(r, 1000)))
    if (Date.now() > end) {
      fs.writeFileSync(path.join(root, 'test-results/thunderbird-days-output.txt'), tb.output());
      assert.fail(`timed out: ${what}; the add-on: ${await addonState().catch((e: Error) => e.message)}`);
    }
}

/** What the add-on knows (its status, its scan marks) and what each folder lists: for a failure's message. */
const addonState = () =>
  settings<string>(`
    const b = win.wrappedJSObject.browser;
    const clone = (o) => Cu.cloneInto(o, win);
    const status = await b.runtime.sendMessage(clone({ pmfPrivate: 'status' }));
    const scans = await b.storage.local.get(clone(['pmf-tb-scan-spam']));
    const folders = [];
    for (const f of await b.folders.query(clone({}))) {
      const l = await b.messages.query(clone({ folderId: f.id }));
      folders.push([f.id, Array.from(l.messages, (m) => m.subject)]);
    }
    return JSON.stringify({ status, scans, folders });`);

const settings = <T = unknown>(body: string, args: unknown[] = []) => onAddonPage<T>(tb, 'options.html', body, args);
/** The settings page's status line: its kind, health and text. */
const statusLine = () =>
  settings<{ kind: string; health: string; connected: string; text: string }>(`
    const l = $('#provider-status');
    return { kind: l.dataset.kind, health: l.dataset.health, connected: l.dataset.connected, text: l.textContent };`);

/** A picture of the settings page's Private spam filtering section, for the tour. */
async function settingsShot(name: string): Promise<void> {
  await showAddonTab(tb, 'options.html');
  await settings(`$('#private-spam').scrollIntoView(); return true;`);
  await tbScreenshot(tb, name);
}

/** Unlocks Alice's key with the settings page's unlock form, as a user does. */
const unlockInSettings = () =>
  settings(
    `await until(() => !$('#unlock').hidden, 'the unlock form');
     $('#unlock input[name=passphrase]').value = args[0];
     $('#unlock button').click();
     await until(() => $('#key-status').dataset.unlocked === '1', 'the unlock');
     return true;`,
    [alice.passphrase],
  );

const connect = (url: string, token: string) => connectInThunderbird(tb, url, token);

before(
  async () => {
    if (skip) return;
    ensureBuilt();
    [alice, bob] = await Promise.all([makeParty('Alice', 'alice@example.org'), makeParty('Bob', 'bob@example.org')]);
    spam = (await caughtSpam(8)).map((e) => e.raw as string);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-tb-days-'));
    fs.chmodSync(dir, 0o755); // Dovecot runs as nobody
    dataDir = path.join(dir, 'provider');
    dovecot = await startDovecot(path.join(dir, 'dovecot'), { alice: 'imap-secret' });
    await BlocklistCatalog.publish(dataDir, 'phishing', 'domain\tevil-login.example\tphishing\t90\t2024-05-30');
    const store = await openStore({ dataDir });
    ({ userId: aliceId, token: aliceToken } = await store.addUser('alice'));
    await store.close();
    // Bodies kept: the damaged-message test finds its delivery in the store by subject.
    stage = await startLmtpStage({
      dir,
      dataDir,
      port: await freePort(),
      relayPort: dovecot.lmtpPort,
      keepBodies: true,
    });
    port = await freePort();
    provider = await startLoopbackProvider(dataDir, { port });
    tb = await startAliceThunderbird(dir, dovecot);
  },
  { timeout: 300_000 },
);
after(() => stopAll(dir, tb, provider, stage, dovecot));

describe('Thunderbird, day after day', { skip, timeout: 900_000 }, () => {
  it('the first-run page offers private spam filtering, worded for Thunderbird', async () => {
    const shown = await onAddonPage<string>(
      tb,
      'welcome.html',
      `await until(() => $('#key-step')?.dataset.kind, 'the key step');
       return win.document.body.innerText;`,
    );
    assert.match(shown, /Private spam filtering/);
    assert.match(shown, /Mail that arrives while Thunderbird is closed is checked when it starts/);
    assert.doesNotMatch(shown, /this browser|extension’s options|Keys & options/);
    await tbScreenshot(tb, 'tour/01-first-run');
  });

  it('search does not say "unlock your key" when the add-on holds none (Thunderbird may)', async () => {
    await showAddonTab(tb, 'search.html');
    const said = await onAddonPage<string>(
      tb,
      'search.html',
      `$('#q').value = 'budget';
       $('#search-form button').click();
       await until(() => !/Searching|Type words/.test($('#search-status').textContent), 'an answer');
       return $('#search-status').textContent;`,
    );
    assert.doesNotMatch(said, /Unlock your key/);
    assert.match(said, /Thunderbird’s own search/);
  });

  it('connecting on the settings page asks about topics and checks the mail already there at once', async () => {
    // Mail that is there before the user connects: spam, a phishing message and a damaged one.
    await deliverSpam('Offer 1');
    await deliverSpam('Offer 2');
    await deliver(
      await encryptedMail(
        'Verify your account',
        'From: security@evil-login.example\r\nSubject: Verify your account\r\n\r\nDear customer,\r\nplease verify your account at https://secure.evil-login.example/verify?id=7 within 24 hours.\r\n',
      ),
    );
    await deliver(
      `From: bob@example.org\r\nTo: alice@example.org\r\nSubject: Damaged\r\n\r\n-----BEGIN PGP MESSAGE-----\r\n\r\nhQEMA+garbagegarbage==\r\n=abcd\r\n-----END PGP MESSAGE-----\r\n`,
    );
    await showAddonTab(tb, 'options.html');
    const unlocked = await settings<string>(
      `await until(() => $('#unlock-panel #key-status'), 'the settings page');
       $('#import textarea[name=armored]').value = args[0];
       $('#import input[name=passphrase]').value = args[1];
       $('#import button[type=submit]').click();
       await until(() => $('#import-status').dataset.kind, 'the import');
       if ($('#import-status').dataset.kind !== 'ok') throw new Error($('#import-status').textContent);
       await until(() => !$('#unlock').hidden, 'the unlock form');
       $('#unlock input[name=passphrase]').value = args[1];
       $('#unlock button').click();
       await until(() => $('#key-status').dataset.unlocked === '1', 'the unlock');
       return $('#key-status').textContent;`,
      [alice.privateArmored, alice.passphrase],
    );
    assert.match(unlocked, /1 of 1 key\(s\) unlocked/);
    const question = await settings<string>(`return $('#provider-sign-in').innerText;`);
    await connect(provider.server.httpUrl, aliceToken);
    await until(async () => (await statusLine()).connected === 'true', 'connected');
    await settingsShot('tour/02-connect');
    // Nothing else happens in Thunderbird: no new mail, nothing shown. The mail already there is checked.
    await until(
      async () => {
        const junk = await onServer('Junk');
        return ['Offer 1', 'Offer 2', 'Verify your account'].every((s) => junk.includes(s));
      },
      'the spam that was there before connecting, in Junk on the server',
      180_000,
    );
    assert.match(question, /Share the topic of each checked message with your provider\?/, 'asked when connecting');
    // The settings page speaks to users, in Thunderbird's words.
    const page = await settings<string>(`return win.document.body.innerText;`);
    for (const dev of [/WASM core/, /pmf_ct_memeq/, /eddsaLegacy|ed25519Legacy/, /this browser/, /extension’s options/])
      assert.doesNotMatch(page, dev);
    assert.match(page, /The search and spam engine is ready\./);
  });

  it('a damaged PGP message is not "decrypted": red, no key claimed, and no check spent on it', async () => {
    await selectInFolder(tb, 'Inbox', 'Damaged');
    const banner = await messageBanner(tb);
    assert.equal(banner.kind, 'error');
    assert.match(banner.text, /could not be read: it is damaged or incomplete/);
    assert.doesNotMatch(banner.text, /Decrypted by Thunderbird|holds your key/);
    const store = await openStore({ dataDir });
    try {
      const [damaged] = (await store.listMessages(aliceId)).filter((m) => m.subject === 'Damaged');
      assert.ok(damaged, 'delivered through the stage');
      assert.equal(await store.isClassified(aliceId, damaged.id), false, 'its one check was not spent');
    } finally {
      await store.close();
    }
  });

  it('a spam in Junk says why it is there: the private verdict, or the blocklist hit with its list and date', async () => {
    await selectInFolder(tb, 'Junk', 'Offer 1');
    const verdict = await messageBanner(tb);
    assert.match(verdict.text, /In Junk because your provider’s private spam check found this message to be spam/);
    await selectInFolder(tb, 'Junk', 'Verify your account');
    const listed = await messageBanner(tb);
    assert.match(listed.text, /In Junk because of your provider’s blocklist/);
    assert.match(
      listed.text,
      /\(evil-login\.example\) is on your provider’s phishing list \(since 2024-05-30, score 90\)/,
    );
    await tbScreenshot(tb, 'tour/03-spam-in-junk');
  });

  it('a message waiting for a locked key has an Unlock button that opens the unlock form; unlocked, it shows', async () => {
    await settings(
      `$('#lock').click(); await until(() => $('#key-status').dataset.unlocked === '0', 'the lock'); return true;`,
    );
    await deliver(await inlinePgpMessage(bob, alice, 'Lunch', 'Lunch on Friday?'));
    await selectInFolder(tb, 'Inbox', 'Lunch');
    const locked = await messageBanner(tb);
    assert.match(locked.text, /unlock/i);
    assert.equal(locked.button, 'Unlock');
    await tbScreenshot(tb, 'tour/04-locked-message');
    const tabs = () =>
      tb.marionette.run<string[]>(
        `return Services.wm.getMostRecentWindow('mail:3pane').gTabmail.tabInfo.map((t) => t.browser?.currentURI?.spec ?? '');`,
      );
    const before = (await tabs()).filter((u) => u.endsWith('options.html#unlock-panel')).length;
    await onAddonPage(tb, '#messagepane', `$('.pmf-banner').shadowRoot.querySelector('button').click(); return true;`);
    await until(
      async () => (await tabs()).filter((u) => u.endsWith('options.html#unlock-panel')).length > before,
      'the unlock form opened by the banner’s button',
      30_000,
    );
    await showAddonTab(tb, 'options.html');
    await unlockInSettings();
    // No click in the message pane: the banner shows the message once the key is unlocked.
    await selectInFolder(tb, 'Inbox', 'Lunch');
    await until(
      async () => /Lunch on Friday\?/.test((await messageBanner(tb)).text),
      'the message shown after the unlock',
      30_000,
    );
  });

  it('mail that came while Thunderbird was closed is checked, and indexed, at the next start and unlock', async () => {
    await tb.restart(async () => {
      // Thunderbird is closed; mail comes in.
      await deliverSpam('Offer 3');
      await deliver(await inlinePgpMessage(bob, alice, 'Walrus', 'The walrus archive is ready.'));
    });
    await showAddonTab(tb, 'options.html');
    await unlockInSettings();
    await until(async () => (await onServer('Junk')).includes('Offer 3'), 'the spam that came while closed, in Junk');
    const found = await settings<string[]>(
      `for (let i = 0; i < 60; i++) {
         const a = await win.wrappedJSObject.browser.runtime.sendMessage(Cu.cloneInto({ type: 'pmf-search', query: 'walrus' }, win));
         const s = a.ok ? Array.from(a.hits, (h) => h.subject) : [];
         if (s.length) return s;
         await new Promise((r) => win.setTimeout(r, 1000));
       }
       return [];`,
    );
    assert.deepEqual(found, ['Walrus']);
  });

  it('the provider down: "waiting for your provider", and the mail that came meanwhile is checked when it is back', async () => {
    await provider.close();
    await deliverSpam('Offer 4');
    await until(async () => (await statusLine()).health === 'waiting', 'the settings page says it waits', 90_000);
    const line = await statusLine();
    assert.match(line.text, /Waiting for your provider: it has not answered since/);
    assert.match(line.text, /Next try at/);
    await settingsShot('tour/05-provider-down');
    assert.ok(!(await onServer('Junk')).includes('Offer 4'));
    provider = await startLoopbackProvider(dataDir, { port });
    // No click, no new mail: the retry finds the provider back and checks what waited.
    await until(
      async () => (await onServer('Junk')).includes('Offer 4'),
      'the spam that came while it was down, in Junk',
    );
    await until(async () => (await statusLine()).health === 'ok', 'the status back to normal', 30_000);
  });

  it('a refused token: the settings page says so and offers the Connect form again, without a reload', async () => {
    await provider.store.revokeToken(aliceToken);
    await deliverSpam('Offer 5');
    await until(
      async () => (await statusLine()).health === 'refused',
      'the settings page says the token was refused',
      90_000,
    );
    const line = await statusLine();
    assert.match(line.text, /no longer accepts|stopped accepting/);
    assert.doesNotMatch(line.text, /Connected|checked today/);
    const form = await settings<{ hidden: boolean; url: string }>(
      `const f = $('#provider-connect'); return { hidden: $('#provider-connect-forms').hidden, url: f.querySelector('input[name=url]').value };`,
    );
    assert.deepEqual(form, { hidden: false, url: provider.server.httpUrl }, 'the form is back, the address filled in');
    await settingsShot('tour/06-token-refused');
  });

  it('a mistyped port says there is no provider there; the right one with a new token connects', async () => {
    const wrong = `http://127.0.0.1:${await freePort()}`;
    await connect(wrong, aliceToken);
    await until(
      async () => (await statusLine()).kind === 'error' && !/Connecting/.test((await statusLine()).text),
      'the answer',
      60_000,
    );
    const said = (await statusLine()).text;
    assert.match(
      said,
      /No provider answers at http:\/\/127\.0\.0\.1:\d+\. Check the address, including the port number/,
    );
    assert.doesNotMatch(said, /when you open it again/);
    await connect(provider.server.httpUrl, await provider.store.issueToken(aliceId));
    await until(
      async () => (await statusLine()).health === 'ok' && (await statusLine()).kind === 'ok',
      'connected again',
    );
  });
  // Last: the slowest to show (10 MB decrypted in the add-on, off the background's thread, which stays
  // awake for it: the event page is stopped after 8 s without events here, 30 s for users).
  it('a 10 MB attachment the add-on decrypted is listed, with the protected subject, and why Thunderbird’s bar disagrees', async () => {
    const inner =
      `Content-Type: multipart/mixed; boundary="inner"\r\nSubject: Quarterly figures\r\n\r\n` +
      `--inner\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nThe figures are attached.\r\n` +
      `--inner\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename="figures.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\n` +
      `${Buffer.alloc(10 * 1024 * 1024, 7)
        .toString('base64')
        .replace(/.{76}/g, '$&\r\n')}\r\n--inner--\r\n`;
    const armored = await encryptText(inner, [alice], bob);
    dovecot.deliver(
      'alice',
      `From: Bob <bob@example.org>\r\nTo: Alice <alice@example.org>\r\nSubject: ...\r\nDate: ${new Date().toUTCString()}\r\nMIME-Version: 1.0\r\n` +
        `Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="outer"\r\n\r\n` +
        `--outer\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n\r\n` +
        `--outer\r\nContent-Type: application/octet-stream; name="encrypted.asc"\r\n\r\n${armored}\r\n--outer--\r\n`,
    );
    await selectInFolder(tb, 'Inbox', '...');
    // While it works, the banner says so (never a false "did not answer").
    const reading = await onAddonPage<string>(
      tb,
      '#messagepane',
      `return (await until(() => $('.pmf-banner')?.shadowRoot?.querySelector('.banner'), 'a banner')).textContent;`,
    );
    assert.match(reading, /is reading this message/);
    // Shown once the add-on has decrypted it all (a while, on a busy machine).
    let shown: Awaited<ReturnType<typeof messageBanner>> | undefined;
    await until(async () => !!(shown = await messageBanner(tb).catch(() => undefined)), 'the banner', 240_000);
    const banner = shown!;
    assert.match(banner.text, /Subject: Quarterly figures/);
    assert.match(banner.text, /Attachment: figures\.bin \(application\/octet-stream, 10 MB\)/);
    assert.match(
      banner.text,
      /Thunderbird’s own bar above says it cannot decrypt this message: your key is in this add-on/,
    );
  });
});
