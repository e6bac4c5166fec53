import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fetchPageFor } from '../background/page-fetch.js';

const TAB = 'http://127.0.0.1:8080/mail';

/** A fetch that records its calls and answers with status (and, optionally, a final URL). */
function fakeFetch(status: number, finalUrl?: string) {
  const calls: [string, RequestInit | undefined][] = [];
  const get = (async (url: string, init?: RequestInit) => {
    calls.push([url, init]);
    const res = new Response(`page ${url}`, { status });
    Object.defineProperty(res, 'url', { value: finalUrl ?? url });
    return res;
  }) as typeof fetch;
  return { get, calls };
}

describe('background page fetch for mailbox indexing', () => {
  it("reads a page of the tab's site with the user's session", async () => {
    const f = fakeFetch(200);
    assert.equal(
      await fetchPageFor('http://127.0.0.1:8080/mail/m/1', TAB, f.get),
      'page http://127.0.0.1:8080/mail/m/1',
    );
    assert.equal(f.calls[0][1]?.credentials, 'include');
  });

  it('refuses other sites, other ports, other schemes and senders without a tab', async () => {
    const f = fakeFetch(200);
    for (const url of [
      'http://evil.example/mail/m/1',
      'http://127.0.0.1:9090/mail/m/1',
      'file:///etc/passwd',
      'nonsense',
    ])
      await assert.rejects(fetchPageFor(url, TAB, f.get), /Only pages of the webmail open in this tab/, url);
    await assert.rejects(fetchPageFor('http://127.0.0.1:8080/mail/m/1', undefined, f.get), /Only pages/);
    assert.equal(f.calls.length, 0, 'nothing was fetched');
  });

  it('says why a page could not be read, in plain words', async () => {
    await assert.rejects(fetchPageFor(`${TAB}/m/1`, TAB, fakeFetch(403).get), /logged out\. Log in again/);
    await assert.rejects(fetchPageFor(`${TAB}/m/1`, TAB, fakeFetch(404).get), /no longer exists/);
    await assert.rejects(fetchPageFor(`${TAB}/m/1`, TAB, fakeFetch(500).get), /HTTP 500/);
    await assert.rejects(fetchPageFor(`${TAB}/m/1`, TAB, fakeFetch(200, 'https://login.example/').get), /login page/);
  });
});
