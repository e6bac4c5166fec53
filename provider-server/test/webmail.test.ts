import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startWebmail } from '../../e2e/fixtures/webmail-server.js';

const RAW_INLINE =
  'From: Bob <bob@example.org>\r\nTo: alice@example.org\r\nSubject: <b>hi</b> & bye\r\n\r\n-----BEGIN PGP MESSAGE-----\r\n\r\nwcBMA<script>\r\n-----END PGP MESSAGE-----\r\n';
const RAW_MIME =
  'From: Bob <bob@example.org>\r\nSubject: ...\r\nContent-Type: multipart/encrypted;\r\n protocol="application/pgp-encrypted"; boundary="b"\r\n\r\n--b\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n--b--\r\n';

let server: Awaited<ReturnType<typeof startWebmail>>;
before(async () => {
  server = await startWebmail({
    tokens: { 'tok-alice': 'alice', 'tok-carol': 'carol' },
    mail: {
      alice: [
        { id: 'm1', raw: RAW_INLINE, date: '2026-11-21T10:00:00Z' },
        { id: 'm2', raw: RAW_MIME, date: '2026-11-21T11:00:00Z' },
      ],
    },
  });
});
after(() => server.close());

const get = (path: string, cookie?: string) =>
  fetch(server.origin + path, { headers: cookie ? { cookie } : {}, redirect: 'manual' });

async function loginCookie(token: string): Promise<string> {
  const res = await fetch(`${server.origin}/mail/login`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  assert.equal(res.status, 303);
  return (res.headers.get('set-cookie') ?? '').split(';')[0];
}

describe('demo webmail handler', () => {
  it('shows a login form without a session and rejects unknown tokens', async () => {
    const res = await get('/mail');
    assert.equal(res.status, 200);
    assert.match(await res.text(), /<form class="login"/);
    assert.equal((await get('/mail/m/m1')).status, 401);
    const bad = await fetch(`${server.origin}/mail/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: 'nope' }),
      redirect: 'manual',
    });
    assert.equal(bad.headers.get('location'), '/mail?failed=1');
    assert.equal(bad.headers.get('set-cookie'), null);
  });

  it('lists the inbox, escaping headers, and shows a message body raw with its content type', async () => {
    const cookie = await loginCookie('tok-alice');
    assert.match(cookie, /^pmf_mail=/);
    const inbox = await (await get('/mail', cookie)).text();
    assert.equal((inbox.match(/class="message-row"/g) ?? []).length, 2);
    assert.ok(inbox.includes('&#60;b&#62;hi&#60;/b&#62; &#38; bye'));
    assert.ok(!inbox.includes('<b>hi</b>'));

    const res = await get('/mail/m/m1', cookie);
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    const html = await res.text();
    assert.match(html, /<article class="message" data-message-id="m1" data-folder="inbox">/);
    assert.ok(html.includes('-----BEGIN PGP MESSAGE-----'));
    assert.ok(html.includes('wcBMA&#60;script&#62;'), 'body is escaped');
    const mime = await (await get('/mail/m/m2', cookie)).text();
    assert.match(
      mime,
      /data-content-type="multipart\/encrypted; protocol=&#34;application\/pgp-encrypted&#34;; boundary=&#34;b&#34;"/,
    );
  });

  it('keeps users apart and 404s unknown messages', async () => {
    const carol = await loginCookie('tok-carol');
    assert.equal((await get('/mail/m/m1', carol)).status, 404);
    assert.match(await (await get('/mail', carol)).text(), /No messages/);
    assert.equal((await get('/mail/m/%E0%A4%A', carol)).status, 404);
  });

  it('leaves other paths to the caller', async () => {
    assert.equal((await get('/mailbox')).status, 404);
    assert.equal(await (await get('/healthz')).text(), 'not found');
  });

  it('moves a message to Junk and back for its own user only, with the session cookie', async () => {
    const alice = await loginCookie('tok-alice');
    const carol = await loginCookie('tok-carol');
    const move = (id: string, folder: string, cookie?: string) =>
      fetch(`${server.origin}/mail/m/${id}/move`, {
        method: 'POST',
        body: new URLSearchParams({ folder }),
        headers: cookie ? { cookie } : {},
        redirect: 'manual',
      });
    assert.equal((await move('m1', 'junk')).status, 401, 'no session');
    assert.equal((await move('m1', 'junk', carol)).status, 404, 'another user cannot move it');
    assert.equal((await move('m1', 'trash', alice)).status, 400);
    const moved = await move('m1', 'junk', alice);
    assert.equal(moved.status, 303);
    assert.equal(moved.headers.get('location'), '/mail/m/m1');
    const junk = await (await get('/mail/junk', alice)).text();
    assert.match(junk, /<table class="inbox" data-folder="junk">[^]*data-message-id="m1"/);
    assert.doesNotMatch(await (await get('/mail', alice)).text(), /data-message-id="m1"/);
    const view = await (await get('/mail/m/m1', alice)).text();
    assert.match(view, /data-folder="junk"/);
    assert.match(view, /Not spam: move to Inbox/);
    assert.equal((await move('m1', 'inbox', alice)).status, 303);
    assert.match(await (await get('/mail', alice)).text(), /data-message-id="m1"/);
  });

  it('issues a fresh token for the logged-in user only (one-click connect)', async () => {
    const issue = (cookie?: string) =>
      fetch(`${server.origin}/mail/extension-token`, {
        method: 'POST',
        headers: cookie ? { cookie } : {},
        redirect: 'manual',
      });
    assert.equal((await issue()).status, 401);
    const res = await issue(await loginCookie('tok-alice'));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const { token } = (await res.json()) as { token: string };
    assert.notEqual(token, 'tok-alice');
    const page = await (await get('/mail', await loginCookie(token))).text();
    assert.match(page, /data-message-id="m1"/, 'the new token belongs to the same user (her mailbox)');
  });
});
