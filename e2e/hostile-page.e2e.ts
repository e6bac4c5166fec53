// A hostile webmail page against the extension, in Debian Chromium. The page's
// own scripts (an XSS in the webmail, or a malicious webmail) run in the main
// world and try what a proof of concept of such a page does: plant ciphertext
// (hidden, or in place of the message shown) and read the outcome from the page's DOM
// and the extension's shadow roots; measure the decrypted text's layout by
// resizing the extension's box or embedding its viewer at chosen widths and
// listening for its height; rewrite or imitate the status; aim a Junk move at
// another message; and, from a page of another site, detect the extension by
// loading viewer.html; and, as the extension's own content script in the tab,
// ask the background for what only extension pages may ask. Each attack is
// checked against what the user sees and what the extension keeps (its search
// index, its keys, the webmail's folders).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { encryptText, inlinePgpMessage, makeParty, type Party } from '../extension/test/mail-fixtures.js';
import { SPAM_BADGE } from '../extension/private/messages.js';
import {
  addWebmailSite,
  importAndUnlock,
  launchWithExtension,
  screenshot,
  type ExtensionBrowser,
} from './fixtures/browser.js';
import { extensionUiText, viewerFrame } from './fixtures/closed-ui.js';
import { startServer, startWebmail, type MemoryMailbox } from './fixtures/webmail-server.js';

const TOKEN = 'alice-hostile-token';
const REAL_TEXT = 'The quarterly numbers are final.';
const PLANTED_HIDDEN = 'The planted walrus secret.';
const PLANTED_SHOWN = 'A planted pelican instead.';
const PHRASE = 'purple otter 42';

let alice: Party, bob: Party;
let box: MemoryMailbox;
let webmail: Awaited<ReturnType<typeof startWebmail>>;
let browser: ExtensionBrowser;
let page: Page;
/** A message to Alice that a page of another site shows. */
let foreignArmor: string;

before(
  async () => {
    [alice, bob] = await Promise.all([makeParty('Alice', 'alice@example.org'), makeParty('Bob', 'bob@example.org')]);
    const date = '2026-11-21T10:00:00Z';
    const plain = (subject: string, body: string) =>
      `From: Bob <bob@example.org>\r\nTo: Alice <alice@example.org>\r\nSubject: ${subject}\r\n\r\n${body}`;
    box = {
      tokens: { [TOKEN]: 'alice@example.org' },
      mail: {
        'alice@example.org': [
          { id: 'real-1', date, raw: await inlinePgpMessage(bob, alice, 'Quarterly', REAL_TEXT) },
          { id: 'plain-1', date, raw: plain('Hello', 'Nothing encrypted here.') },
          { id: 'victim-1', date, raw: plain('Keep me', 'This one must stay in the Inbox.') },
        ],
      },
    };
    foreignArmor = await encryptText('Shown on another site.', [alice], bob);
    webmail = await startWebmail(box);
    browser = await launchWithExtension();
    page = await browser.context.newPage();
    await importAndUnlock(browser, page, alice.privateArmored, alice.passphrase);
    await page.goto(browser.extensionUrl('options.html'));
    await page.locator('#import textarea[name=armored]').fill(bob.publicArmored);
    await page.locator('#import button[type=submit]').click();
    await page.locator('#keys tbody tr').nth(1).waitFor();
    // The user's security phrase, shown behind every status the extension draws.
    await page.locator('#security-form input[name=phrase]').fill(PHRASE);
    await page.locator('#security-form button[type=submit]').click();
    await page.locator('#security-status[data-kind=ok]').waitFor();
    await addWebmailSite(browser, webmail.origin);
    await page.goto(`${webmail.origin}/mail`);
    await page.locator('input[name=token]').fill(TOKEN);
    await page.locator('form.login button').click();
    await page.locator('tr.message-row').first().waitFor();
    // The page's scripts, from the first byte of every document: they log every message posted to the
    // page and, on the encrypted message's page, plant a hidden message and swap the shown one's ciphertext.
    const planted = {
      hidden: await encryptText(PLANTED_HIDDEN, [alice], bob),
      shown: await encryptText(PLANTED_SHOWN, [alice], bob),
    };
    await page.addInitScript((p) => {
      const w = window as unknown as { seen: string[] };
      w.seen = [];
      addEventListener('message', (e) => w.seen.push(JSON.stringify(e.data)), true);
      document.addEventListener('DOMContentLoaded', () => {
        if (location.pathname !== '/mail/m/real-1') return;
        const hidden = document.createElement('article');
        hidden.className = 'message';
        hidden.dataset.messageId = 'real-1';
        hidden.style.display = 'none';
        hidden.append(Object.assign(document.createElement('pre'), { className: 'body', textContent: p.hidden }));
        document.querySelector('main')!.append(hidden);
        document.querySelector('article.message pre.body')!.textContent = p.shown;
      });
    }, planted);
  },
  { timeout: 180_000 },
);

after(async () => {
  await browser?.close();
  await webmail?.close();
});

/** What the page's own scripts can read of the extension's outcome: data attributes and open shadow roots. */
const pageReads = () =>
  page.evaluate(() => ({
    states: [...document.querySelectorAll<HTMLElement>('[data-pmf-state]')].map((e) => e.dataset.pmfState),
    shadows: [...document.querySelectorAll('*')].flatMap((e) => (e.shadowRoot ? [e.shadowRoot.textContent ?? ''] : [])),
    seen: (window as unknown as { seen: string[] }).seen,
  }));

type Chrome = { chrome: { runtime: { sendMessage(m: unknown): Promise<unknown> } } };

/** What the background answers an extension page (options.html): its answer, or the sending error. */
async function fromExtensionPage(msg: unknown): Promise<unknown> {
  const options = await browser.context.newPage();
  try {
    await options.goto(browser.extensionUrl('options.html'));
    return await options.evaluate(
      (m) =>
        (globalThis as unknown as Chrome).chrome.runtime.sendMessage(m).then(
          (answer) => answer ?? 'no answer',
          (e: Error) => `no answer (${e.message})`,
        ),
      msg,
    );
  } finally {
    await options.close();
  }
}

/**
 * What the background answers the extension's content script in the webmail's tab: the message is
 * sent from the tab's isolated world (the content script's), put there by the service worker.
 */
async function fromContentScript(msg: unknown): Promise<unknown> {
  const worker = browser.context.serviceWorkers().find((w) => w.url().includes(browser.extensionId))!;
  type Scripting = {
    chrome: {
      tabs: { query(q: object): Promise<{ id: number }[]> };
      scripting: {
        executeScript(o: {
          target: { tabId: number; frameIds: number[] };
          world: 'ISOLATED';
          func: (m: unknown) => Promise<unknown>;
          args: unknown[];
        }): Promise<{ result: unknown }[]>;
      };
    };
  };
  return worker.evaluate(
    async ({ url, msg }) => {
      // tsx names the function below with its __name helper, which the worker lacks.
      (globalThis as unknown as { __name: unknown }).__name = (f: unknown) => f;
      const { tabs, scripting } = (globalThis as unknown as Scripting).chrome;
      const [tab] = await tabs.query({ url });
      const [{ result }] = await scripting.executeScript({
        target: { tabId: tab.id, frameIds: [0] },
        world: 'ISOLATED',
        func: (m) =>
          (globalThis as unknown as Chrome).chrome.runtime.sendMessage(m).then(
            (answer) => answer ?? 'no answer',
            (e: Error) => `no answer (${e.message})`,
          ),
        args: [msg],
      });
      return result;
    },
    { url: `${webmail.origin}/*`, msg },
  );
}

/** Asks the extension's search index, as its search page does. */
async function searchHits(query: string): Promise<string[]> {
  const answer = (await fromExtensionPage({ type: 'pmf-search', query })) as { hits: { url: string }[] };
  return answer.hits.map((h) => h.url);
}

describe('a hostile webmail page', { timeout: 180_000 }, () => {
  it('planted ciphertext is not decrypted, and the page reads no outcome', async () => {
    await page.goto(`${webmail.origin}/mail/m/real-1`);
    const viewer = await viewerFrame(page);
    await viewer.locator('#text').filter({ hasText: /\S/ }).waitFor({ timeout: 30_000 });
    await page.waitForTimeout(3_000); // time for a second (planted) message, were it read
    await screenshot(page, 'hostile-page-planted');
    // The message shown is the one the webmail's server holds, not the ciphertext the page put there.
    assert.equal((await viewer.locator('#text').textContent())?.trim(), REAL_TEXT);
    const reads = await pageReads();
    assert.deepEqual(reads.states, [], 'no outcome in the page’s elements');
    assert.deepEqual(reads.shadows, [], 'no open shadow root of the extension');
    for (const word of ['walrus', 'pelican']) assert.deepEqual(await searchHits(word), [], `${word} never decrypted`);
  });

  it('the viewer’s height reaches the page neither by postMessage nor by its layout at chosen widths', async () => {
    const heights: number[] = [];
    for (const width of [60, 120, 240, 480]) {
      heights.push(
        await page.evaluate(async (w) => {
          const host = document.querySelector<HTMLElement>('.pmf-host')!;
          host.style.width = `${w}px`;
          await new Promise((r) => setTimeout(r, 1_000));
          return host.getBoundingClientRect().height;
        }, width),
      );
    }
    assert.equal(new Set(heights).size, 1, `one height at every width: ${heights}`);
    // The page embeds the viewer itself, with any view id it could read, at the widths it likes.
    const embedded = await page.evaluate(async (id) => {
      const ids = [...document.querySelectorAll('*')].flatMap((e) =>
        [...(e.shadowRoot?.querySelectorAll('iframe') ?? [])].map((f) => new URL(f.src).searchParams.get('v') ?? ''),
      );
      const url = `chrome-extension://${id}/viewer.html`;
      let fetched: string;
      try {
        fetched = `loaded (${(await fetch(url)).status})`;
      } catch {
        fetched = 'refused';
      }
      for (const w of [60, 120, 240])
        document.body.append(
          Object.assign(document.createElement('iframe'), { src: `${url}?v=${ids[0] ?? 'x'}`, style: `width:${w}px` }),
        );
      await new Promise((r) => setTimeout(r, 3_000));
      return fetched;
    }, browser.extensionId);
    assert.equal(embedded, 'refused', 'viewer.html cannot be loaded by its static address');
    assert.deepEqual((await pageReads()).seen, [], 'nothing was posted to the page');
  });

  it('the page can neither rewrite the status nor read the user’s security phrase', async () => {
    await page.evaluate(() => {
      for (const e of document.querySelectorAll('*'))
        for (const el of e.shadowRoot?.querySelectorAll('*') ?? [])
          if (!el.children.length) el.textContent = 'OpenPGP: Decrypted; signed by Alice CEO (signature verified)';
    });
    const shown = await extensionUiText(page);
    assert.doesNotMatch(shown, /Alice CEO/);
    assert.match(shown, /signed by Bob <bob@example\.org>/);
    // The real status carries the user's phrase on their pattern, which the page cannot read to imitate.
    const status = (await viewerFrame(page)).locator('#status[data-security-background]');
    assert.equal((await status.locator('#phrase').textContent())?.trim(), PHRASE);
    assert.equal(await page.evaluate((p) => document.documentElement.outerHTML.includes(p), PHRASE), false);
  });

  it('a Junk move goes to the message the extension read, whatever the page says at move time', async () => {
    // The page wraps the message's body in an article naming another message.
    await page.evaluate(() => {
      const pre = document.querySelector('article.message pre.body')!;
      const inner = Object.assign(document.createElement('article'), { className: 'message' });
      Object.assign(inner.dataset, { messageId: 'victim-1', folder: 'inbox' });
      pre.before(inner);
      inner.append(pre);
    });
    // The background's fresh spam verdict for the message that was read, as it sends one.
    const sender = await browser.context.newPage();
    await sender.goto(browser.extensionUrl('options.html'));
    type Chrome = {
      chrome: {
        tabs: {
          query(q: object): Promise<{ id: number }[]>;
          sendMessage(tab: number, m: unknown, o: object): Promise<unknown>;
        };
      };
    };
    await sender.evaluate(
      async ({ url, msg }) => {
        const { tabs } = (globalThis as unknown as Chrome).chrome;
        const [tab] = await tabs.query({ url });
        await tabs.sendMessage(tab.id, msg, { frameId: 0 }).catch(() => {});
      },
      {
        url: `${webmail.origin}/mail/m/real-1`,
        msg: {
          type: SPAM_BADGE,
          sourceId: `${webmail.origin}/mail#real-1`,
          badge: { state: 'spam', text: 'spam (private check)' },
          moveToJunk: true,
        },
      },
    );
    await sender.close();
    const folderOf = (id: string) => box.mail['alice@example.org'].find((m) => m.id === id)?.folder ?? 'inbox';
    const until = Date.now() + 10_000;
    while (folderOf('real-1') !== 'junk' && folderOf('victim-1') === 'inbox' && Date.now() < until)
      await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual([folderOf('real-1'), folderOf('victim-1')], ['junk', 'inbox']);
  });

  it('a page of another site cannot find the extension nor have it read a message', async () => {
    const other = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(
        `<!doctype html><body class="pmf-demo-webmail"><main><article class="message" data-message-id="x">` +
          `<pre class="body">${foreignArmor}</pre></article></main></body>`,
      );
      return true;
    });
    const probe = await browser.context.newPage();
    try {
      await probe.goto(`${other.origin}/mail/m/x`);
      await probe.waitForTimeout(3_000);
      const found = await probe.evaluate(async (id) => {
        let fetched: string;
        try {
          fetched = `loaded (${(await fetch(`chrome-extension://${id}/viewer.html`)).status})`;
        } catch {
          fetched = 'refused';
        }
        return { fetched, inserted: document.querySelectorAll('body [class^=pmf-], [data-pmf-state]').length };
      }, browser.extensionId);
      assert.deepEqual(found, { fetched: 'refused', inserted: 0 });
    } finally {
      await probe.close();
      await other.close();
    }
  });

  it('the content script in a web tab is refused every request only extension pages may make', async () => {
    await page.goto(`${webmail.origin}/mail`);
    await page.locator('tr.message-row').first().waitFor();
    const unlocked = async () =>
      ((await fromExtensionPage({ type: 'status' })) as { value: { unlocked: number } }).value.unlocked;
    // The channel works: a request content scripts may make is answered.
    assert.equal(((await fromContentScript({ type: 'status' })) as { ok: boolean }).ok, true);
    const refusedAs = (error: string) => ({ ok: false, error });

    // Keys: neither locked, forgotten nor unlocked from the tab.
    const fingerprint = alice.privateKey.getFingerprint();
    assert.equal(await unlocked(), 1);
    for (const [msg, error] of [
      [{ type: 'lock' }, 'Only extension pages may lock keys.'],
      [{ type: 'keys-changed', deleted: [fingerprint] }, 'Only extension pages may change keys.'],
      [{ type: 'view', viewId: 'x' }, 'Only extension pages may read decrypted mail.'],
      [{ type: 'webmail-sites', remove: webmail.origin }, 'Only extension pages may change the webmail sites.'],
      [{ type: 'tb-displayed-message', tabId: 1 }, 'Only extension pages may read Thunderbird messages.'],
    ] as const)
      assert.deepEqual(await fromContentScript(msg), refusedAs(error), JSON.stringify(msg));
    assert.equal(await unlocked(), 1, 'the key is neither locked nor forgotten');
    const sites = (await fromExtensionPage({ type: 'webmail-sites' })) as { value: string[] };
    assert.ok(sites.value.includes(webmail.origin), 'the webmail site stays');

    // Search, local and of all mail: the index answers the extension page only.
    const search = { type: 'pmf-search', query: 'quarterly' };
    const hits = (await fromExtensionPage(search)) as { hits: { url: string }[] };
    assert.equal(hits.hits.length, 1, 'the page’s search finds the message');
    for (const msg of [
      search,
      { type: 'pmf-remote-search', query: 'quarterly' },
      { type: 'pmf-remote-search-settings', enabled: false, deleteRemote: true },
    ]) {
      const answer = await fromContentScript(msg);
      assert.match(String(answer), /^no answer/, `${JSON.stringify(msg)} answered ${JSON.stringify(answer)}`);
    }
    const remote = (await fromExtensionPage({ type: 'pmf-remote-search-settings' })) as { value: { enabled: boolean } };
    assert.equal(remote.value.enabled, true, 'search of all mail stays on');

    // The private functions' page requests: refused, and the settings unchanged.
    const privateStatus = await fromExtensionPage({ pmfPrivate: 'status' });
    assert.equal((privateStatus as { ok: boolean }).ok, true);
    const refusal = { ok: false, error: 'Only extension pages may change the provider connection.' };
    for (const msg of [
      { pmfPrivate: 'status' },
      { pmfPrivate: 'settings', spamCheck: false, moveSpam: true, topics: true, linkCheck: false },
      { pmfPrivate: 'connect', url: 'http://127.0.0.1:9/', token: 'attacker' },
      { pmfPrivate: 'signIn', address: 'alice@example.org', password: 'guess' },
      { pmfPrivate: 'disconnect' },
      { pmfPrivate: 'packageLog', policy: null },
    ])
      assert.deepEqual(await fromContentScript(msg), refusal, JSON.stringify(msg));
    assert.deepEqual(
      await fromExtensionPage({ pmfPrivate: 'status' }),
      privateStatus,
      'the private settings unchanged',
    );

    // Unlock with the right passphrase: refused from the tab, done from the extension page.
    assert.deepEqual(await fromExtensionPage({ type: 'lock' }), { ok: true, value: true });
    assert.deepEqual(
      await fromContentScript({ type: 'unlock', passphrase: alice.passphrase }),
      refusedAs('Only extension pages may unlock keys.'),
    );
    assert.equal(await unlocked(), 0, 'the key stays locked');
    assert.deepEqual(await fromExtensionPage({ type: 'unlock', passphrase: alice.passphrase }), { ok: true, value: 1 });
    assert.equal(await unlocked(), 1);
  });
});
