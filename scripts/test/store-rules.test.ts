// The store rules the release applies to every package: each rule passes a
// package that keeps it and names the problem in one that breaks it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { chromeStoreProblems, isChromeVersion, pngSize, unwantedFiles, type Files } from '../release/store-rules.js';

const icon = (size: number) => fs.readFileSync(new URL(`../../extension/icons/icon-${size}.png`, import.meta.url));

const MANIFEST = {
  manifest_version: 3,
  name: 'Private Mail Functions',
  short_name: 'PMF',
  version: '1.2.0',
  description: 'OpenPGP decryption in webmail.',
  icons: { '16': 'icons/icon-16.png', '48': 'icons/icon-48.png', '128': 'icons/icon-128.png' },
  permissions: ['storage', 'alarms'],
  host_permissions: ['https://localhost/*'],
  optional_host_permissions: ['https://*/*'],
  background: { service_worker: 'background.js' },
  action: { default_popup: 'popup.html', default_icon: { '16': 'icons/icon-16.png' } },
  content_security_policy: { extension_pages: "script-src 'self' 'wasm-unsafe-eval'; object-src 'none'" },
};
const JUSTIFIED = new Set(['storage', 'alarms', 'tabs', 'https://localhost/*', 'https://*/*', '<all_urls>']);

function chromePackage(manifest: object = MANIFEST, extra: Record<string, string> = {}): Map<string, Buffer> {
  return new Map<string, Buffer>([
    ['manifest.json', Buffer.from(JSON.stringify(manifest))],
    ['background.js', Buffer.from('chrome.storage.local.get("x");chrome.alarms.create("y",{});')],
    ['popup.html', Buffer.from('<!doctype html><script src="popup.js"></script>')],
    ['popup.js', Buffer.from('document.title="x"')],
    ['icons/icon-16.png', icon(16)],
    ['icons/icon-48.png', icon(48)],
    ['icons/icon-128.png', icon(128)],
    ...Object.entries(extra).map(([k, v]): [string, Buffer] => [k, Buffer.from(v)]),
  ]);
}

const problems = (files: Files) => chromeStoreProblems(files, JUSTIFIED);
const withManifest = (change: object) => problems(chromePackage({ ...MANIFEST, ...change }));

describe('Chrome Web Store rules', () => {
  it('pass a package that keeps them', () => {
    assert.deepEqual(problems(chromePackage()), []);
  });

  it('manifest: version 3, name, short name, description of at most 132 characters', () => {
    assert.deepEqual(withManifest({ manifest_version: 2 }), [
      'manifest_version: must be 3 (the Web Store takes no Manifest V2 item)',
    ]);
    assert.deepEqual(withManifest({ name: 'n'.repeat(76) }), ['name: must be 1 to 75 characters']);
    assert.deepEqual(withManifest({ short_name: 'Private Mail F' }), ['short_name: must be 1 to 12 characters']);
    assert.deepEqual(withManifest({ description: 'd'.repeat(133) }), ['description: must be 1 to 132 characters']);
    assert.deepEqual(withManifest({ description: 'd'.repeat(132) }), []);
    assert.deepEqual(problems(new Map([['manifest.json', Buffer.from('{')]])), ['manifest.json: not JSON']);
    assert.deepEqual(problems(new Map()), ['manifest.json: missing from the package root']);
  });

  it('manifest: a __MSG_ name or description is measured in every language, default_locale names one', () => {
    const localized = { ...MANIFEST, name: '__MSG_name__', description: '__MSG_about__', default_locale: 'en' };
    const locale = (name: string, about?: string) =>
      JSON.stringify({ name: { message: name }, ...(about === undefined ? {} : { about: { message: about } }) });
    const pkg = (de: string, m: object = localized) =>
      problems(
        chromePackage(m, {
          '_locales/en/messages.json': locale('Mail', 'Reads mail.'),
          '_locales/de/messages.json': de,
        }),
      );
    assert.deepEqual(pkg(locale('Post', 'Liest Post.')), []);
    // German without its own description: Chrome shows the English one.
    assert.deepEqual(pkg(locale('Post')), []);
    assert.deepEqual(pkg(locale('P'.repeat(76), 'Liest Post.')), ['name: must be 1 to 75 characters']);
    assert.deepEqual(pkg(locale('Post', 'd'.repeat(133))), ['description: must be 1 to 132 characters']);
    assert.deepEqual(pkg(locale('Post'), { ...localized, default_locale: undefined }), [
      'default_locale: required when _locales/ is present',
    ]);
    assert.deepEqual(pkg(locale('Post'), { ...localized, default_locale: 'fr' }), [
      'default_locale: _locales/fr/messages.json is missing',
    ]);
  });

  it('version: one to four numbers 0-65535 without leading zeros, not all zero', () => {
    for (const v of ['1', '0.1', '1.2.3.4', '65535.0.0']) assert.ok(isChromeVersion(v), v);
    for (const v of ['', '0', '0.0', '1.02', '1.2.3.4.5', '65536', '1.2-beta', '1..2', 1.2])
      assert.ok(!isChromeVersion(v), String(v));
    assert.match(withManifest({ version: '1.2.0-dev' })[0], /^version: "1.2.0-dev"/);
  });

  it('icons: a 128 px one, each file present, a PNG, of the size the manifest says', () => {
    const { '128': _, ...no128 } = MANIFEST.icons;
    assert.deepEqual(withManifest({ icons: no128 }), [
      'icons: a 128x128 icon is required (install dialog and Web Store listing)',
    ]);
    assert.deepEqual(withManifest({ icons: { ...MANIFEST.icons, '32': 'icons/icon-16.png' } }), [
      'icons: icons/icon-16.png is 16x16, the manifest says 32',
    ]);
    assert.deepEqual(withManifest({ icons: { ...MANIFEST.icons, '96': 'icons/icon-96.png' } }), [
      'icons: icons/icon-96.png is missing or not a PNG',
    ]);
    assert.deepEqual(pngSize(icon(96)), { width: 96, height: 96 });
    assert.equal(pngSize(Buffer.from('GIF89a...............')), undefined);
  });

  it('background is a service worker, and every file the manifest names is in the package', () => {
    assert.deepEqual(withManifest({ background: { scripts: ['background.js'] } }), [
      'background: Chrome runs Manifest V3 background code as a service_worker only',
    ]);
    const files = chromePackage();
    files.delete('popup.html');
    assert.deepEqual(problems(files), ['popup.html: named in the manifest, missing from the package']);
  });

  it('no remote code: CSP sources, script tags, eval and network imports', () => {
    const csp = { extension_pages: "script-src 'self' https://cdn.example.org 'unsafe-eval'" };
    assert.deepEqual(withManifest({ content_security_policy: csp }), [
      'content_security_policy: script-src allows https://cdn.example.org',
      "content_security_policy: script-src allows 'unsafe-eval'",
    ]);
    const page = (html: string) => problems(chromePackage(MANIFEST, { 'popup.html': html }));
    assert.deepEqual(page('<script src="https://cdn.example.org/x.js"></script>'), [
      'popup.html: loads https://cdn.example.org/x.js, which is not in the package',
    ]);
    assert.deepEqual(page('<script src="//cdn.example.org/x.js"></script>'), [
      'popup.html: loads //cdn.example.org/x.js, which is not in the package',
    ]);
    assert.deepEqual(page('<script>alert(1)</script>'), [
      'popup.html: an inline script (the extension CSP blocks it; the Web Store reads it as remote code)',
    ]);
    assert.deepEqual(page('<SCRIPT SRC=popup.js></SCRIPT>'), []);
    const script = (js: string) => problems(chromePackage(MANIFEST, { 'popup.js': js }));
    assert.deepEqual(script('x=eval("1+1")'), ['popup.js: turns strings into code (eval/new Function)']);
    assert.deepEqual(script('x=new Function("return 1")'), ['popup.js: turns strings into code (eval/new Function)']);
    assert.deepEqual(script('importScripts("https://cdn.example.org/w.js")'), [
      'popup.js: loads a script from the network',
    ]);
    assert.deepEqual(script('import(`//cdn.example.org/m.js`)'), ['popup.js: loads a script from the network']);
    assert.deepEqual(script('x.evaluate(1); medieval(2)'), []);
  });

  it('permissions: each justified, each API one used, every site only at run time', () => {
    assert.deepEqual(withManifest({ permissions: ['storage', 'alarms', 'cookies'] }), [
      'permission cookies: no justification row in extension/README.md',
      'permission cookies: asked for, but no script calls chrome.cookies',
    ]);
    assert.deepEqual(withManifest({ permissions: ['storage', 'alarms', 'tabs'] }), [
      'permission tabs: asked for, but no script calls chrome.tabs',
    ]);
    assert.deepEqual(withManifest({ host_permissions: ['<all_urls>'] }), [
      'host_permissions: <all_urls> grants every site at install; ask for it at run time',
    ]);
    assert.deepEqual(withManifest({ optional_host_permissions: ['https://mail.example.org/*'] }), [
      'permission https://mail.example.org/*: no justification row in extension/README.md',
    ]);
  });
});

describe('files no store package carries', () => {
  it('source maps, references to them, tests and TypeScript sources', () => {
    const files = new Map([
      ['background.js', Buffer.from('x()\n//# sourceMappingURL=background.js.map')],
      ['background.js.map', Buffer.from('{}')],
      ['test/fixture.html', Buffer.from('')],
      ['lib/keystore.test.js', Buffer.from('')],
      ['lib/keystore.ts', Buffer.from('')],
      ['pages.css', Buffer.from('a{}/*# sourceMappingURL=pages.css.map */')],
      ['options.js', Buffer.from('ok()')],
      ['latest.js', Buffer.from('ok()')],
    ]);
    assert.deepEqual(unwantedFiles(files), [
      'background.js: points to a source map',
      'background.js.map: a source map',
      'test/fixture.html: a test file',
      'lib/keystore.test.js: a test file',
      'lib/keystore.ts: TypeScript source',
      'pages.css: points to a source map',
    ]);
  });
});
