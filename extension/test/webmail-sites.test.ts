import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  changeSites,
  isWebmailSite,
  loadSites,
  MAX_SITES,
  registerSites,
  sitePattern,
  sitePermission,
  webmailOrigin,
  type ContentScripts,
  type SitesStorage,
} from '../lib/webmail-sites.js';

function memoryStorage(): SitesStorage & { data: Record<string, unknown> } {
  const data: Record<string, unknown> = {};
  return {
    data,
    get: async (k) => (k in data ? { [k]: structuredClone(data[k]) } : {}),
    set: async (items) => void Object.assign(data, structuredClone(items)),
  };
}

/** browser.scripting as far as registerSites uses it, recording what is registered. */
function fakeScripting() {
  let registered: { id: string; matches?: string[]; js?: string[]; allFrames?: boolean }[] = [];
  const calls: string[] = [];
  const api = {
    getRegisteredContentScripts: async (f?: { ids?: string[] }) =>
      structuredClone(registered.filter((s) => !f?.ids || f.ids.includes(s.id))),
    registerContentScripts: async (s: typeof registered) => {
      calls.push('register');
      registered.push(...structuredClone(s));
    },
    unregisterContentScripts: async (f?: { ids?: string[] }) => {
      calls.push('unregister');
      registered = registered.filter((s) => f?.ids && !f.ids.includes(s.id));
    },
  };
  return { api: api as unknown as ContentScripts, registered: () => registered, calls };
}

describe('webmail sites: where the content script runs', () => {
  it('takes https anywhere and plain http on this computer only, as an origin', () => {
    assert.equal(webmailOrigin(' https://mail.example.org/mail/?_task=mail '), 'https://mail.example.org');
    assert.equal(webmailOrigin('http://127.0.0.1:8080/mail'), 'http://127.0.0.1:8080');
    assert.equal(webmailOrigin('http://localhost/'), 'http://localhost');
    assert.throws(() => webmailOrigin('http://mail.example.org'), /https/);
    assert.throws(() => webmailOrigin('ftp://127.0.0.1'), /https/);
    assert.throws(() => webmailOrigin('mail.example.org'), /Enter your webmail’s address/);
  });

  it('asks the user for any host but this computer, by a pattern without a port', () => {
    assert.equal(sitePermission('http://127.0.0.1:8080'), undefined);
    assert.deepEqual(sitePermission('https://mail.example.org:8443'), { origins: ['https://mail.example.org/*'] });
    assert.equal(sitePattern('http://127.0.0.1:8080'), 'http://127.0.0.1/*');
  });

  it('keeps the sites added, answers for exact origins only, and drops junk from storage', async () => {
    const storage = memoryStorage();
    assert.deepEqual(await changeSites(storage, { add: 'http://127.0.0.1:8080/mail' }), ['http://127.0.0.1:8080']);
    await changeSites(storage, { add: 'http://127.0.0.1:8080/other' });
    assert.deepEqual(await loadSites(storage), ['http://127.0.0.1:8080'], 'added once');
    assert.equal(await isWebmailSite(storage, 'http://127.0.0.1:8080/mail/m/1'), true);
    assert.equal(await isWebmailSite(storage, 'http://127.0.0.1:9090/mail/m/1'), false, 'another port');
    assert.equal(await isWebmailSite(storage, 'https://127.0.0.1:8080/mail'), false, 'another scheme');
    assert.equal(await isWebmailSite(storage, undefined), false);
    storage.data.webmailSites = ['http://evil.example', 'https://ok.example', 42, 'https://ok.example/path'];
    assert.deepEqual(await loadSites(storage), ['https://ok.example']);
    assert.deepEqual(await changeSites(storage, { remove: 'https://ok.example' }), []);
  });

  it('refuses more than the maximum', async () => {
    const storage = memoryStorage();
    for (let i = 0; i < MAX_SITES; i++) await changeSites(storage, { add: `https://m${i}.example.org` });
    await assert.rejects(changeSites(storage, { add: 'https://one-more.example.org' }), /At most/);
  });

  it('registers the content script for exactly the sites, in all frames, and nothing without sites', async () => {
    const s = fakeScripting();
    await registerSites(s.api, ['http://127.0.0.1:8080', 'http://127.0.0.1:9090', 'https://mail.example.org']);
    assert.deepEqual(s.registered(), [
      {
        id: 'pmf-webmail',
        matches: ['http://127.0.0.1/*', 'https://mail.example.org/*'],
        js: ['content.js'],
        allFrames: true,
        runAt: 'document_idle',
        persistAcrossSessions: true,
      },
    ]);
    await registerSites(s.api, ['https://mail.example.org', 'http://127.0.0.1:1']);
    assert.deepEqual(s.calls, ['register'], 'the same patterns: nothing re-registered');
    await registerSites(s.api, []);
    assert.deepEqual(s.registered(), []);
  });
});
