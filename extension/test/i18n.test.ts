// Every user-facing string goes through _locales: each key the code, the pages
// and the manifests use exists in every language, no language has a key more
// or less than English, and each translation takes the same placeholders.
// t() outside an extension answers from the English file.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fillMessage, t } from '../lib/i18n.js';

const root = path.resolve(import.meta.dirname, '../..');
const localesDir = path.join(root, 'extension/_locales');

interface Message {
  message: string;
  description?: string;
  placeholders?: Record<string, { content: string; example?: string }>;
}
type Messages = Record<string, Message>;

const read = (lang: string): Messages =>
  JSON.parse(fs.readFileSync(path.join(localesDir, lang, 'messages.json'), 'utf8')) as Messages;
const languages = fs.readdirSync(localesDir).sort();
const en = read('en');

function files(dir: string, ext: RegExp): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'test' || e.name === '_locales' ? [] : files(p, ext);
    return ext.test(e.name) ? [p] : [];
  });
}

const code = files(path.join(root, 'extension'), /\.ts$/).map((f) => fs.readFileSync(f, 'utf8'));
const pages = files(path.join(root, 'extension'), /\.html$/).map((f) => [f, fs.readFileSync(f, 'utf8')] as const);
const manifests = ['manifest.json', 'webpack.config.js'].map((f) => fs.readFileSync(path.join(root, f), 'utf8'));

/** Keys the pages ask for: data-i18n="key", data-i18n-placeholder="key", …; and the manifests' __MSG_key__. */
function markedKeys(): { key: string; where: string }[] {
  const found: { key: string; where: string }[] = [];
  for (const [file, html] of pages)
    for (const m of html.matchAll(/\bdata-i18n(?:-[a-z-]+)?="([^"]*)"/g))
      found.push({ key: m[1], where: path.relative(root, file) });
  for (const text of manifests)
    for (const m of text.matchAll(/__MSG_(\w+)__/g)) found.push({ key: m[1], where: 'manifest' });
  return found;
}

/** Keys the scripts name: t('key', …) and keys kept in tables and ternaries ('key' literals that are keys). */
function scriptKeys(): { called: string[]; named: Set<string> } {
  const called = code.flatMap((c) => [...c.matchAll(/(?<![\w.])t\(\s*'([^']*)'/g)].map((m) => m[1]));
  const named = new Set(code.flatMap((c) => [...c.matchAll(/'(\w+)'/g)].map((m) => m[1])).filter((k) => k in en));
  return { called, named };
}

const placeholderNames = (m: Message) => [...m.message.matchAll(/\$(\w+)\$/g)].map((x) => x[1].toLowerCase());

describe('messages', () => {
  it('English and German are there', () => {
    assert.ok(languages.includes('en') && languages.includes('de'), languages.join());
  });

  it('every key a page or manifest marks exists in English', () => {
    const missing = markedKeys().filter(({ key }) => !(key in en));
    assert.deepEqual(missing, []);
  });

  it('every key a script passes to t() exists in English', () => {
    assert.deepEqual(
      scriptKeys().called.filter((k) => !(k in en)),
      [],
    );
  });

  it('every English message is used by a page, a manifest or a script', () => {
    const marked = new Set(markedKeys().map((m) => m.key));
    const { named } = scriptKeys();
    assert.deepEqual(
      Object.keys(en).filter((k) => !marked.has(k) && !named.has(k)),
      [],
    );
  });

  for (const lang of languages) {
    it(`${lang}: the same keys as English, each message filled, with English's placeholders`, () => {
      const messages = read(lang);
      assert.deepEqual(Object.keys(messages).sort(), Object.keys(en).sort(), 'keys differ from English');
      for (const [key, m] of Object.entries(messages)) {
        assert.ok(/^[\w@]+$/.test(key), `${key}: a key is letters, digits and _`);
        assert.ok(m.message.trim(), `${key}: empty message`);
        assert.deepEqual(m.placeholders ?? {}, en[key].placeholders ?? {}, `${key}: placeholders differ from English`);
        const used = new Set(placeholderNames(m));
        const defined = new Set(Object.keys(m.placeholders ?? {}).map((p) => p.toLowerCase()));
        assert.deepEqual([...used].sort(), [...defined].sort(), `${key}: uses other placeholders than it defines`);
        // A lone $ would be read as the start of a placeholder: a dollar sign is written $$.
        assert.ok(!/\$(?!\$|\w+\$)/.test(m.message.replace(/\$\$|\$\w+\$/g, '')), `${key}: a stray $`);
      }
    });
  }
});

describe('t() and its placeholders', () => {
  it('outside an extension: the English message, placeholders filled in order', () => {
    assert.equal(t('unlock_open', 1, 2, '10:00'), '1 of 2 key(s) unlocked until 10:00.');
    assert.equal(t('options_title'), 'Private Mail Functions settings');
  });

  it('fills as the browsers do: names in any case, $$ a dollar, a missing substitution empty', () => {
    const m = {
      message: 'Pay $$5 to $WHO$ by $when$.',
      placeholders: { who: { content: '$1' }, WHEN: { content: '$2' } },
    };
    assert.equal(fillMessage(m, ['Bob', 'noon']), 'Pay $5 to Bob by noon.');
    assert.equal(fillMessage(m, ['Bob']), 'Pay $5 to Bob by .');
  });

  describe('in an extension', () => {
    const g = globalThis as { chrome?: unknown };
    after(() => delete g.chrome);
    it('asks the browser, and falls back to English only for a message it lacks', () => {
      const asked: unknown[] = [];
      g.chrome = {
        i18n: {
          getMessage: (key: string, subs: string[]) => {
            asked.push([key, subs]);
            return key === 'locked' ? 'Gesperrt.' : '';
          },
        },
      };
      assert.equal(t('locked'), 'Gesperrt.');
      assert.equal(t('unlock_done', 3), 'Unlocked 3 key(s).');
      assert.deepEqual(asked, [
        ['locked', []],
        ['unlock_done', ['3']],
      ]);
    });
  });
});
