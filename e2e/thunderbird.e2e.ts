// The Thunderbird build in a real Thunderbird ESR (Debian's, headless): the xpi installed
// from a profile made from files, an IMAP account on a local Dovecot holding
// a PGP/MIME and an inline PGP message from Bob. Checks the first-run page,
// a key imported and unlocked in the add-on, the "OpenPGP status" popup
// showing each message's decrypted text with Bob's verified signature, the
// same messages read through Alice's key in Thunderbird's own key ring (the
// add-on makes no signature claim, since Thunderbird tells add-ons none, and
// Thunderbird's own header shows Bob's verified signature), no "Receiving end does
// not exist" errors, new mail found by search without any click, and mail
// delivered through the provider's LMTP stage (provider-server lmtp) decrypted
// with the provider's id readable by the add-on; then, connected to a
// provider-server on the same store (URL + token on the options page), spam
// delivered over LMTP is checked privately and found in Junk over IMAP, and
// Thunderbird's own "Not Junk" on one brings it back to the Inbox for good.
// Screenshots in test-results/.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as openpgp from 'openpgp';
import {
  inlinePgpMessage,
  makeParty,
  partlySignedMessage,
  pgpMimeMessage,
  type Party,
} from '../extension/test/mail-fixtures.js';
import { PROVIDER_ID } from '../mail/message-id.js';
import { lmtpSend } from '../provider-server/src/lmtp/lmtp-client.js';
import { caughtSpam } from './fixtures/caught-spam.js';
import { openStore, type Provider } from '../provider-server/src/provider.js';
import { ensureBuilt, resultPath } from './fixtures/browser.js';
import { startDovecot, type Dovecot } from './fixtures/dovecot.js';
import { startLmtpStage, type RunningStage } from './fixtures/lmtp-stage.js';
import { freePort, stopAll } from './fixtures/process.js';
import {
  GECKO_ID,
  inAddonPage,
  startAliceThunderbird,
  pageFn,
  thunderbirdSkipReason,
  type RunningThunderbird,
} from './fixtures/thunderbird.js';
import { startLoopbackProvider } from './fixtures/provider.js';
import { connectInThunderbird } from './fixtures/provider-connect.js';
import {
  messageBanner as messageBannerOf,
  selectInFolder as selectIn,
  tbScreenshot,
} from './fixtures/thunderbird-ui.js';

const skip = thunderbirdSkipReason();
let alice: Party, bob: Party;
let dir: string;
let dovecot: Dovecot;
let tb: RunningThunderbird;
let stage: RunningStage;
let provider: Provider | undefined;
/** Alice's access token at the provider (issued when she was added). */
let aliceToken: string;

const messageBanner = () => messageBannerOf(tb);
const screenshot = (name: string) => tbScreenshot(tb, name);

/** Runs a function body on the add-on's options page. */
const optionsPage = (body: string, args: unknown[] = []) =>
  inAddonPage(tb.marionette, 'options.html', pageFn(body), args);

/** Selects the message listed as `listed` in the Inbox and opens the "OpenPGP status" popup. */
async function openStatusPopup(listed: string): Promise<void> {
  await tb.marionette.run(
    `const win = Services.wm.getMostRecentWindow('mail:3pane');
     win.gTabmail.switchToTab(0);
     const popups = () => [win.document, win.gTabmail.currentAboutMessage?.document]
       .flatMap((d) => [...(d?.querySelectorAll('browser') ?? [])])
       .filter((b) => b.currentURI?.spec.endsWith('tb-message.html'));
     const popup = () => popups().length > 0;
     // Close the previous message's popup first.
     popups().forEach((b) => b.closest('panel')?.hidePopup());
     for (let i = 0; i < 50 && popup(); i++) await new Promise((r) => win.setTimeout(r, 100));
     const about3 = win.gTabmail.currentAbout3Pane;
     for (let i = 0; i < 300 && !(about3.gDBView?.rowCount >= 2); i++) await new Promise((r) => win.setTimeout(r, 100));
     const row = [...Array(about3.gDBView.rowCount).keys()].find((i) => about3.gDBView.getMsgHdrAt(i).mime2DecodedSubject === args[0]);
     about3.threadTree.selectedIndex = row;
     let button;
     for (let i = 0; i < 300; i++) {
       const msg = win.gTabmail.currentAboutMessage;
       button = msg?.gMessage?.mime2DecodedSubject === args[0] && msg.document.querySelector('[id$="-messageDisplayAction-toolbarbutton"]');
       if (button) break;
       await new Promise((r) => win.setTimeout(r, 100));
     }
     // The first click can come before the button is wired up for this message: click until the popup shows.
     for (let i = 0; i < 10 && !popup(); i++) {
       button.click();
       for (let j = 0; j < 20 && !popup(); j++) await new Promise((r) => win.setTimeout(r, 100));
     }`,
    [listed],
  );
}

interface PopupView {
  subject: string;
  summary: string;
  kind: string;
  text: string;
  by: string;
}

/** What the open popup shows, once it has its answer; a picture of it goes to test-results/. */
async function readStatusPopup(name: string): Promise<PopupView> {
  const view = await inAddonPage<PopupView>(
    tb.marionette,
    'tb-message.html',
    pageFn(`
    await until(() => $('#summary').dataset.kind, 'the popup');
    const text = (id) => $(id).textContent;
    return { subject: text('#subject'), summary: text('#summary'), kind: $('#summary').dataset.kind, text: text('#text'), by: text('#by') };`),
  );
  await screenshot(name); // the window (popups are separate widgets)
  // The popup itself, drawn from its browser.
  const png = await tb.marionette.run<string>(
    `const win = Services.wm.getMostRecentWindow('mail:3pane');
     const b = [win.document, win.gTabmail.currentAboutMessage.document].flatMap((d) => [...d.querySelectorAll('browser')])
       .find((x) => x.currentURI?.spec.endsWith('tb-message.html'));
     const bitmap = await b.browsingContext.currentWindowGlobal.drawSnapshot(null, 1, 'white');
     const canvas = win.document.createElementNS('http://www.w3.org/1999/xhtml', 'canvas');
     [canvas.width, canvas.height] = [bitmap.width, bitmap.height];
     canvas.getContext('2d').drawImage(bitmap, 0, 0);
     return canvas.toDataURL('image/png');`,
  );
  fs.writeFileSync(resultPath(`${name}-popup.png`), Buffer.from(png.split(',')[1], 'base64'));
  return view;
}

before(
  async () => {
    if (skip) return;
    ensureBuilt();
    [alice, bob] = await Promise.all([makeParty('Alice', 'alice@example.org'), makeParty('Bob', 'bob@example.org')]);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-thunderbird-'));
    fs.chmodSync(dir, 0o755); // Dovecot runs as nobody
    dovecot = await startDovecot(path.join(dir, 'dovecot'), { alice: 'imap-secret' });
    dovecot.deliver(
      'alice',
      await pgpMimeMessage(bob, alice, 'Pangolin budget', 'The pangolin budget for 2027 is approved.'),
    );
    dovecot.deliver('alice', await inlinePgpMessage(bob, alice, 'Lunch', 'Inline lunch on Friday?'));
    dovecot.deliver(
      'alice',
      await partlySignedMessage(bob, alice, 'Transfer', 'I approve the transfer.', 'Send it to IBAN XX00 6666.'),
    );
    // The provider's LMTP stage in front of Dovecot, as a provider runs it; alice is a user of the provider.
    const store = await openStore({ dataDir: path.join(dir, 'provider') });
    aliceToken = (await store.addUser('alice')).token;
    await store.close();
    const port = await freePort();
    stage = await startLmtpStage({ dir, dataDir: path.join(dir, 'provider'), port, relayPort: dovecot.lmtpPort });
    tb = await startAliceThunderbird(dir, dovecot);
  },
  { timeout: 180_000 },
);
after(() => stopAll(dir, tb, provider, stage, dovecot));

describe('Thunderbird ESR with the add-on and an IMAP account', { skip, timeout: 600_000 }, () => {
  it('opens the first-run page on install', async () => {
    const text = await inAddonPage<string>(
      tb.marionette,
      'welcome.html',
      pageFn(`
      await until(() => $('#key-step')?.dataset.kind, 'the key step');
      return win.document.body.textContent;`),
    );
    assert.match(text, /reads your OpenPGP-encrypted mail/);
    assert.match(text, /If Thunderbird already has your OpenPGP key/, 'worded for Thunderbird');
    await screenshot('thunderbird-first-run');
  });

  it('imports Alice’s key into the add-on and unlocks it on the options page', async () => {
    await inAddonPage(tb.marionette, 'welcome.html', pageFn(`win.location.href = 'options.html'; return true;`));
    const status = await inAddonPage<string>(
      tb.marionette,
      'options.html',
      pageFn(`
      await until(() => $('#unlock-panel #key-status'), 'the options page');
      for (const [armored, passphrase] of args) {
        $('#import-status').removeAttribute('data-kind');
        $('#import textarea[name=armored]').value = armored;
        $('#import input[name=passphrase]').value = passphrase;
        $('#import button[type=submit]').click();
        await until(() => $('#import-status').dataset.kind, 'the import');
        if ($('#import-status').dataset.kind !== 'ok') throw new Error($('#import-status').textContent);
      }
      await until(() => !$('#unlock').hidden, 'the unlock form');
      $('#unlock input[name=passphrase]').value = args[0][1];
      $('#unlock button').click();
      await until(() => $('#key-status').dataset.unlocked === '1', 'the unlock');
      return $('#key-status').textContent;`),
      [
        [alice.privateArmored, alice.passphrase],
        [bob.publicArmored, ''],
      ],
    );
    assert.match(status, /1 of 1 key\(s\) unlocked/);
    // The background tells only tabs its content script runs in (Thunderbird has none) about new keys:
    // a message to any other tab logs "Receiving end does not exist" in Thunderbird's error console.
    const logged = await tb.marionette.run<string[]>(
      `return Services.console.getMessageArray().map((m) => m.message ?? m.errorMessage ?? String(m));`,
    );
    assert.ok(logged.length > 0, 'the error console was read');
    assert.deepEqual(
      logged.filter((m) => /Receiving end does not exist|Could not establish connection/.test(m)),
      [],
    );
  });

  // [subject in the message list, (protected) subject, text]: PGP/MIME hides the real subject.
  for (const [listed, subject, text] of [
    ['...', 'Pangolin budget', 'The pangolin budget for 2027 is approved.'],
    ['Lunch', 'Lunch', 'Inline lunch on Friday?'],
  ]) {
    it(`"OpenPGP status" shows "${subject}" decrypted, with Bob's verified signature`, async () => {
      await openStatusPopup(listed);
      const popup = await readStatusPopup(`thunderbird-${subject.split(' ')[0].toLowerCase()}`);
      assert.equal(popup.subject, subject);
      assert.equal(popup.text.trim(), text);
      assert.match(popup.summary, /signed by Bob <bob@example\.org> on .* \(signature verified; key /);
      assert.equal(popup.kind, 'ok');
      assert.match(popup.by, /keys stored in this add-on/);
      // Thunderbird lacks the key: the banner in the message pane shows the text, no click needed.
      const banner = await messageBanner();
      assert.equal(banner.kind, 'ok');
      assert.match(banner.text, /signature verified/);
      assert.ok(banner.text.includes(text), banner.text);
      await screenshot(`thunderbird-${subject.split(' ')[0].toLowerCase()}-banner`);
    });
  }

  it('a hostile sender\'s unsigned part beside Bob\'s signed block is not vouched for: "partly signed", not green', async () => {
    await openStatusPopup('Transfer');
    const popup = await readStatusPopup('thunderbird-partly-signed');
    assert.match(popup.summary, /^Partly encrypted or signed: only the text the add-on shows here was checked/);
    assert.match(popup.summary, /signed by Bob <bob@example\.org>/);
    assert.equal(popup.kind, 'warn');
    assert.equal(popup.text.trim(), 'I approve the transfer.', 'the popup shows which text was checked');
    const banner = await messageBanner();
    assert.equal(banner.kind, 'warn');
    assert.match(banner.text, /^Partly encrypted or signed/);
    assert.ok(banner.text.includes('I approve the transfer.'), banner.text);
    // Outside the message's content: the toolbar button's badge and tooltip.
    const button = await tb.marionette.run<{ badge: string; tooltip: string }>(
      `const win = Services.wm.getMostRecentWindow('mail:3pane');
       for (let i = 0; i < 100; i++) {
         const b = win.gTabmail.currentAboutMessage?.document.querySelector('[id$="-messageDisplayAction-toolbarbutton"]');
         if (b?.getAttribute('badge')) return { badge: b.getAttribute('badge'), tooltip: b.getAttribute('tooltiptext') ?? '' };
         await new Promise((r) => win.setTimeout(r, 100));
       }
       return { badge: '', tooltip: '' };`,
    );
    assert.equal(button.badge, '!');
    assert.match(button.tooltip, /^OpenPGP: Partly encrypted or signed/);
    await screenshot('thunderbird-partly-signed-banner');
  });

  it("imports Alice's key into Thunderbird's own key ring and locks the add-on's", async () => {
    await optionsPage(
      `$('#lock').click(); await until(() => $('#key-status').dataset.unlocked === '0', 'the lock'); return true;`,
    );
    // The banner of the message still displayed (the partly signed one) wipes the text it showed.
    const wiped = await inAddonPage<string>(
      tb.marionette,
      '#messagepane',
      pageFn(`
      const b = await until(() => {
        const x = $('.pmf-banner')?.shadowRoot?.querySelector('.banner');
        return x && x.textContent.includes('keys were locked') && x;
      }, 'the banner wiped at the lock');
      return b.textContent;`),
    );
    assert.ok(!wiped.includes('I approve the transfer.'), wiped);
    const imported = await tb.marionette.run<number>(
      `const { RNP } = ChromeUtils.importESModule('chrome://openpgp/content/modules/RNP.sys.mjs');
       const { EnigmailKeyRing } = ChromeUtils.importESModule('chrome://openpgp/content/modules/keyRing.sys.mjs');
       const passCB = (_win, _prompt, flags) => { flags.canceled = false; return args[1]; };
       const res = await RNP.importSecKeyBlockImpl(null, passCB, false, args[0]);
       // Bob's public key, accepted as verified, as a user does after comparing fingerprints.
       const bob = await RNP.importPubkeyBlockAutoAcceptImpl(null, args[2], 'verified');
       EnigmailKeyRing.updateKeys([...res.importedKeys, ...bob.importedKeys]);
       EnigmailKeyRing.clearCache();
       return res.importedKeys.length + bob.importedKeys.length;`,
      [alice.privateArmored, alice.passphrase, bob.publicArmored],
    );
    assert.equal(imported, 2, "Alice's secret key and Bob's verified public key are in Thunderbird's key ring");
  });

  /** Thunderbird's own OpenPGP indicator in the message header: its encrypted and signed states. */
  const thunderbirdCryptoStatus = () =>
    tb.marionette.run<{ tech: string; encrypted: string; signed: string }>(
      `const doc = Services.wm.getMostRecentWindow('mail:3pane').gTabmail.currentAboutMessage.document;
       // Each icon's picture names its state: chrome://messenger/skin/icons/message-signed-verified.svg.
       const state = (id) => { const icon = doc.getElementById(id); return icon.hidden ? '' : icon.getAttribute('src').split('-').pop().replace('.svg', ''); };
       for (let i = 0; i < 100 && !state('signedHdrIcon'); i++) await new Promise((r) => doc.defaultView.setTimeout(r, 100));
       return { tech: doc.getElementById('encryptionTechBtn').textContent.trim(), encrypted: state('encryptedHdrIcon'), signed: state('signedHdrIcon') };`,
    );

  for (const [listed, subject, text, name] of [
    ['...', 'Pangolin budget', 'The pangolin budget for 2027 is approved.', 'pgp-mime'],
    ['Lunch', 'Lunch', 'Inline lunch on Friday?', 'inline'],
  ]) {
    it(`with the key only in Thunderbird, shows "${subject}" as Thunderbird decrypted it, with Thunderbird's verified signature`, async () => {
      await openStatusPopup(listed);
      // The signature check the user sees on this path is Thunderbird's own, in the message header.
      assert.deepEqual(await thunderbirdCryptoStatus(), { tech: 'OpenPGP', encrypted: 'ok', signed: 'verified' });
      const popup = await readStatusPopup(`thunderbird-key-in-thunderbird-${name}`);
      assert.equal(popup.subject, subject, 'the protected subject, for PGP/MIME');
      assert.equal(popup.text.trim(), text);
      assert.match(popup.summary, /Decrypted by Thunderbird's own OpenPGP/);
      // Thunderbird gives add-ons no signature status: no claim, in plain words, and not green.
      assert.match(popup.summary, /Signature not checked by the add-on/);
      assert.doesNotMatch(popup.summary, /signature verified/);
      assert.equal(popup.kind, 'warn');
      assert.match(popup.by, /key stored in Thunderbird; no need to import it/);
      const banner = await messageBanner();
      assert.equal(banner.kind, 'warn');
      assert.match(banner.text, /Signature not checked by the add-on/);
      // The decrypted text is where the user reads mail: in the pane Thunderbird filled, or in the banner.
      const pane = await inAddonPage<string>(
        tb.marionette,
        '#messagepane',
        pageFn(`return win.document.body.textContent;`),
      );
      assert.ok(pane.includes(text), pane);
      await screenshot(`thunderbird-key-in-thunderbird-${name}-pane`);
    });
  }

  /** Search through the background, as the search page does, until `query` finds something. */
  const searchFor = (query: string) =>
    inAddonPage<string[]>(
      tb.marionette,
      'options.html',
      pageFn(`
      for (let i = 0; i < 60; i++) {
        const answer = await win.wrappedJSObject.browser.runtime.sendMessage(Cu.cloneInto({ type: 'pmf-search', query: args[0] }, win));
        const subjects = answer.ok ? Array.from(answer.hits, (h) => h.subject) : [];
        if (subjects.length) return subjects;
        await new Promise((r) => win.setTimeout(r, 1000));
      }
      return [];`),
      [query],
    );

  it('remembers mail that arrives while locked and indexes it after the unlock', async () => {
    dovecot.deliver('alice', await inlinePgpMessage(bob, alice, 'Walrus', 'The walrus archive is ready.'));
    // The add-on's key is still locked (previous test): the new message waits, by id, in storage.local.
    const pending = await optionsPage(`
      for (let i = 0; i < 600; i++) {
        const { 'pmf-tb-pending': ids } = await win.wrappedJSObject.browser.storage.local.get('pmf-tb-pending');
        if (ids?.length) return ids.length;
        await new Promise((r) => win.setTimeout(r, 100));
      }
      return 0;`);
    assert.equal(pending, 1);
    await optionsPage(
      `$('#unlock input[name=passphrase]').value = args[0];
      $('#unlock button').click();
      await until(() => $('#key-status').dataset.unlocked === '1', 'the unlock');
      return true;`,
      [alice.passphrase],
    );
    assert.deepEqual(await searchFor('walrus'), ['Walrus']);
  });

  it('indexes new mail as it arrives, after Thunderbird stopped the idle background: search finds it without a click', async () => {
    // Thunderbird stops an idle event page (8 s here, 30 s by default): the new-mail event must wake
    // it, with the unlocked key, and index the message.
    const state = () =>
      tb.marionette.run<string>(
        `return WebExtensionPolicy.getByID(${JSON.stringify(GECKO_ID)}).extension.backgroundState;`,
      );
    const deadline = Date.now() + 60_000;
    while ((await state()) !== 'stopped') {
      assert.ok(Date.now() < deadline, `the background never went idle: ${await state()}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    dovecot.deliver('alice', await inlinePgpMessage(bob, alice, 'Okapi', 'The okapi census is done.'));
    assert.deepEqual(await searchFor('okapi'), ['Okapi']);
  });

  it('encrypted mail arriving over the provider’s LMTP stage is decrypted, and the add-on reads the provider’s id', async () => {
    const raw = await inlinePgpMessage(bob, alice, 'Capybara', 'The capybara pool opens on Monday.');
    const reply = await lmtpSend(
      { host: '127.0.0.1', port: stage.port, timeoutMs: 30_000 },
      { from: 'bob@example.org', to: ['alice@example.org'], data: Buffer.from(raw.replace(/\r?\n/g, '\r\n')) },
    );
    assert.equal(reply.data[0]?.code, 250, reply.data[0]?.text);
    const store = await openStore({ dataDir: path.join(dir, 'provider') });
    const [registered] = (await store.listMessages((await store.userId('alice'))!)).map((m) => m.id);
    await store.close();
    assert.match(registered, PROVIDER_ID);
    assert.deepEqual(await searchFor('capybara'), ['Capybara'], 'decrypted and indexed as it arrived');
    await openStatusPopup('Capybara');
    const popup = await readStatusPopup('thunderbird-over-lmtp');
    assert.equal(popup.text.trim(), 'The capybara pool opens on Monday.');
    // What the add-on sees of the message in Thunderbird: the id the provider registered.
    const seen = await optionsPage(`
      const { messages } = win.wrappedJSObject.browser;
      const [m] = (await messages.query(Cu.cloneInto({ subject: 'Capybara' }, win))).messages;
      return (await messages.getFull(m.id)).headers['x-pmf-message-id'];`);
    assert.deepEqual(seen, [registered]);
  });
  it('connected to the provider, spam arriving over LMTP is checked privately and moved to Junk on the server', async () => {
    // provider-server on loopback, on the store the LMTP stage registers deliveries in. Its request
    // limit makes the add-on wait (pace itself) for most of a minute between offers, longer than the
    // idle stop: the event page must stay up while its worker has a run in flight.
    provider = await startLoopbackProvider(path.join(dir, 'provider'), { limits: { requestsPerMinute: 6 } });
    await connectInThunderbird(tb, provider.server.httpUrl, aliceToken);
    // The connection downloads the model into the add-on's IndexedDB: polled from here, each look short.
    for (const deadline = Date.now() + 120_000; ; await new Promise((r) => setTimeout(r, 500))) {
      const [connected, text] = (await optionsPage(
        `const line = $('#provider-status'); return [line.dataset.connected, line.textContent];`,
      )) as [string, string];
      if (connected === 'true') break;
      if (Date.now() > deadline) {
        fs.writeFileSync(resultPath('thunderbird-spam-output.txt'), tb.output());
        assert.fail(`not connected: ${text}`);
      }
    }
    await screenshot('thunderbird-spam-connected');
    // Spam from the test split that the model catches, each whole message encrypted to Alice inside an inline-PGP mail.
    const spam = await caughtSpam(3);
    for (const [i, e] of spam.entries()) {
      const armored = await openpgp.encrypt({
        message: await openpgp.createMessage({ text: e.raw as string }),
        encryptionKeys: alice.publicKey,
      });
      const raw = `From: bob@example.org\r\nTo: alice@example.org\r\nSubject: Offer ${i}\r\nMessage-ID: <offer-${i}@example.org>\r\n\r\n${armored.replace(/\r?\n/g, '\r\n')}`;
      const reply = await lmtpSend(
        { host: '127.0.0.1', port: stage.port, timeoutMs: 30_000 },
        { from: 'bob@example.org', to: ['alice@example.org'], data: Buffer.from(raw) },
      );
      assert.equal(reply.data[0]?.code, 250, reply.data[0]?.text);
    }
    // Checked over IMAP on the server (a fresh session per look): all of the spam is in Junk there.
    let subjects: string[] = [];
    for (
      const deadline = Date.now() + 240_000;
      subjects.length < spam.length;
      await new Promise((r) => setTimeout(r, 1000))
    ) {
      subjects = await offersOnServer('Junk');
      if (subjects.length < spam.length && Date.now() > deadline) {
        const status = await optionsPage(
          `return JSON.stringify(await win.wrappedJSObject.browser.runtime.sendMessage(Cu.cloneInto({ pmfPrivate: 'status' }, win)));`,
        );
        assert.fail(`in Junk on the server: ${subjects.join(', ') || 'nothing'}; ${String(status)}`);
      }
    }
    assert.deepEqual(subjects.sort(), ['Offer 0', 'Offer 1', 'Offer 2']);
    await screenshot('thunderbird-spam-junk');
  });

  it('“Not Junk” in Thunderbird takes one back to the Inbox on the server, and the add-on leaves it there', async () => {
    const [subject] = (await offersOnServer('Junk')).sort();
    assert.ok(subject, 'a message the add-on moved to Junk');
    // The user's "Not Junk": the Junk folder shown, the message selected, Thunderbird's own command.
    await selectInFolder('Junk', subject);
    await tb.marionette.run(
      `Services.wm.getMostRecentWindow('mail:3pane').gTabmail.currentAbout3Pane.commandController.doCommand('cmd_markAsNotJunk');`,
    );
    for (const deadline = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 1000))) {
      if ((await offersOnServer('INBOX')).includes(subject)) break;
      if (Date.now() > deadline) assert.fail(`${subject} did not come back to the Inbox`);
    }
    await screenshot('thunderbird-not-junk');
    // Shown again (a fresh look at it) and some time later: still in the Inbox, not moved to Junk again.
    await selectInFolder('Inbox', subject);
    await screenshot('thunderbird-not-junk-inbox');
    await new Promise((r) => setTimeout(r, 8000));
    const inbox = await offersOnServer('INBOX');
    assert.equal(inbox.filter((x) => x === subject).length, 1, 'in the Inbox, once (one move, not two)');
    assert.ok(!(await offersOnServer('Junk')).includes(subject), 'not moved back to Junk');
    // The correction is kept with the verdict: the add-on says so.
    const badges = (await optionsPage(`
      const req = win.indexedDB.open('pmf-private');
      const db = await new Promise((ok, ko) => { req.onsuccess = () => ok(req.result); req.onerror = () => ko(req.error); });
      const all = await new Promise((ok) => { const r = db.transaction('verdicts').objectStore('verdicts').getAll(); r.onsuccess = () => ok(r.result); });
      db.close();
      return all.map((v) => JSON.stringify({ spam: v.spam, user: v.user?.spam, movedFrom: v.movedFrom }));`)) as string[];
    if (!badges.some((v) => JSON.parse(v).user === false)) {
      fs.writeFileSync(resultPath('thunderbird-not-junk-output.txt'), tb.output());
      assert.fail(`no correction kept: ${badges.join(' ')} (Thunderbird's output in test-results/)`);
    }
    assert.equal(badges.filter((v) => JSON.parse(v).user === false).length, 1);
  });
});

const selectInFolder = (use: 'Inbox' | 'Junk', subject: string) => selectIn(tb, use, subject);

/** Subjects of the test's "Offer …" messages in an IMAP mailbox, read on the server. */
const offersOnServer = async (mailbox: string): Promise<string[]> =>
  (await dovecot.subjectsIn('alice', mailbox)).filter((s) => s.startsWith('Offer '));
