// The extension's pages with Chromium's UI language set to German: every marked
// element shows its German message (the child elements it holds, such as the
// input of a label, kept in it), the page says lang="de", the lines the scripts
// write are German too, and no raw message key (__MSG_…, or a key's name) is
// visible anywhere, in text or in a placeholder, title or label.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { fillMessage } from '../extension/lib/i18n.js';
import { launchWithExtension, root, type ExtensionBrowser } from './fixtures/browser.js';

type Messages = Record<string, { message: string; placeholders?: Record<string, { content: string }> }>;
const read = (lang: string): Messages =>
  JSON.parse(fs.readFileSync(path.join(root, 'extension/_locales', lang, 'messages.json'), 'utf8')) as Messages;
const de = read('de');
const keys = Object.keys(read('en'));
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
/** The German message as an element shows it around its child elements (which stand where the placeholders are). */
const german = (key: string, children = 0) => squash(fillMessage(de[key], Array<string>(children).fill('')));

interface Marked {
  key: string;
  attr?: string;
  /** The element's own text (its child elements left out), or the attribute's value. */
  text: string;
  children: number;
}

/** What the page shows: its marked elements, all its visible text and its attributes people read. */
function shown(page: Page) {
  return page.evaluate(() => {
    const marked: Marked[] = [];
    for (const el of document.querySelectorAll('[data-i18n]')) {
      const own = [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent);
      marked.push({ key: el.getAttribute('data-i18n')!, text: own.join(''), children: el.children.length });
    }
    for (const attr of ['placeholder', 'title', 'aria-label'])
      for (const el of document.querySelectorAll(`[data-i18n-${attr}]`))
        marked.push({
          key: el.getAttribute(`data-i18n-${attr}`)!,
          attr,
          text: el.getAttribute(attr) ?? '',
          children: 0,
        });
    const attributes = [...document.querySelectorAll('[placeholder], [title], [aria-label]')].flatMap((el) =>
      ['placeholder', 'title', 'aria-label'].map((a) => el.getAttribute(a) ?? ''),
    );
    return {
      lang: document.documentElement.lang,
      title: document.title,
      text: document.body.innerText,
      attributes,
      marked,
    };
  });
}

let browser: ExtensionBrowser;
const i18nErrors: string[] = [];

before(async () => {
  browser = await launchWithExtension({ lang: 'de' });
  browser.context.on('console', (m) => {
    if (m.type() === 'error' && m.text().startsWith('i18n:')) i18nErrors.push(m.text());
  });
});
after(async () => browser?.close());

async function open(file: string, ready?: (page: Page) => Promise<unknown>) {
  const page = await browser.context.newPage();
  await page.goto(browser.extensionUrl(file));
  await ready?.(page);
  return { page, view: await shown(page) };
}

/** The checks every page passes; `dynamic`: marked elements a script rewrites once the page runs. */
function checkPage(view: Awaited<ReturnType<typeof shown>>, dynamic: string[] = []) {
  assert.equal(view.lang, 'de');
  assert.ok(view.marked.length > 0, 'the page marks its text');
  for (const m of view.marked) {
    if (!m.attr && dynamic.includes(m.key)) continue;
    assert.ok(m.key in de, `${m.key}: no German message`);
    assert.equal(squash(m.text), german(m.key, m.children), `${m.key}${m.attr ? ` (${m.attr})` : ''}`);
  }
  const visible = [view.title, view.text, ...view.attributes].join('\n');
  assert.doesNotMatch(visible, /__MSG_/);
  const rawKeys = keys.filter((k) => k.includes('_') && new RegExp(`\\b${k}\\b`).test(visible));
  assert.deepEqual(rawKeys, [], 'raw message keys on the page');
}

describe('the extension in German (Chromium --lang=de)', () => {
  it('settings page: every heading, label, button and the engine line', async () => {
    const { page, view } = await open('options.html', (p) =>
      p.locator('#wasm-status[data-state="ok"]').waitFor({ timeout: 60_000 }),
    );
    checkPage(view, ['options_engine_starting']);
    assert.equal(await page.locator('#wasm-status').textContent(), german('engine_ready'));
    // The key line starts as "loading" and changes once the key store has answered.
    await page.waitForFunction(
      (loading) => {
        const t = document.querySelector('#key-status')?.textContent;
        return !!t && t !== loading;
      },
      german('unlock_loading'),
      { timeout: 30_000 },
    );
    assert.equal(squash((await page.locator('#key-status').textContent()) ?? ''), german('unlock_no_key'));
    // The inputs stay inside their labels, so they keep their German names.
    await page.getByLabel('Passphrase wiederholen').waitFor();
    await page.getByLabel('Schlüssel entsperrt lassen für').waitFor();
    await page.close();
  });

  it('popup, welcome, search, viewer and Thunderbird status pages', async () => {
    const pages: [string, string[]][] = [
      ['popup.html', []],
      ['welcome.html', ['welcome_checking_keys']],
      ['search.html', ['search_local_only']],
      ['viewer.html', []],
      ['tb-message.html', ['tb_reading', 'tb_status_title']],
    ];
    for (const [file, dynamic] of pages) {
      const { page, view } = await open(file, (p) => p.waitForLoadState('load'));
      await page.waitForTimeout(500); // the scripts' first lines
      checkPage(await shown(page), dynamic);
      assert.ok(view.marked.length > 0, file);
      await page.close();
    }
  });

  it('the welcome page says in German how many keys there are', async () => {
    const { page } = await open('welcome.html');
    await page.locator('#key-step[data-kind]').waitFor();
    assert.equal(squash((await page.locator('#key-step').textContent()) ?? ''), german('welcome_keys_none'));
    await page.close();
  });

  it('no message misplaced the elements it holds', () => {
    assert.deepEqual(i18nErrors, []);
  });
});
