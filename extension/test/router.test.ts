// The background's one router (lib/router.ts): a row answers only the
// senders it names. A content script in a webmail tab (or a page script that
// got hold of it) must not reach a row meant for extension pages (unlock,
// the provider token), nor anything from another extension.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Runtime } from 'webextension-polyfill';
import { listen, route, senderKind, type RuntimeLike } from '../lib/router.js';

const ID = 'pmf-extension-id';
const BASE = `chrome-extension://${ID}/`;

function fakeRuntime() {
  let listener: ((msg: unknown, sender: Runtime.MessageSender) => Promise<unknown> | undefined) | undefined;
  const runtime: RuntimeLike = {
    id: ID,
    getURL: (path: string) => BASE + path,
    onMessage: { addListener: (cb) => void (listener = cb) },
  };
  return { runtime, send: (msg: unknown, sender: Runtime.MessageSender) => listener!(msg, sender) };
}

const page: Runtime.MessageSender = { id: ID, url: `${BASE}options.html` };
const tab: Runtime.MessageSender = {
  id: ID,
  url: 'https://mail.example/inbox',
  tab: { id: 7 } as Runtime.MessageSender['tab'],
  frameId: 0,
};
const display: Runtime.MessageSender = { id: ID, url: 'about:blank', tab: { id: 8 } as Runtime.MessageSender['tab'] };
const foreign: Runtime.MessageSender = { id: 'another-extension', url: `${BASE}options.html` };

test('senders: extension pages, our content script in a web tab, other contexts of ours, nothing else', () => {
  const { runtime } = fakeRuntime();
  assert.equal(senderKind(runtime, page), 'page');
  assert.equal(senderKind(runtime, tab), 'tab');
  assert.equal(senderKind(runtime, display), 'extension');
  assert.equal(senderKind(runtime, foreign), undefined);
  // A web page's URL naming the extension's is still a tab: the check is on the URL's start.
  assert.equal(senderKind(runtime, { ...tab, url: `https://evil.example/${BASE}` }), 'tab');
});

test('each row answers only its senders; others get its refusal or no answer; the first matching row answers', async () => {
  const { runtime, send } = fakeRuntime();
  const asked: string[] = [];
  const isKind =
    (k: string) =>
    (m: unknown): m is { k: string } =>
      (m as { k?: unknown })?.k === k;
  listen(runtime, [
    route({ is: isKind('token'), from: ['page'], refusal: { ok: false }, answer: async () => asked.push('token') }),
    route({ is: isKind('connect'), from: ['tab'], answer: async () => asked.push('connect') }),
    route({
      is: (m): m is unknown => typeof m === 'object',
      from: ['page', 'tab', 'extension'],
      answer: async () => asked.push('any'),
    }),
  ]);
  assert.deepEqual(await send({ k: 'token' }, tab), { ok: false }, 'a tab is refused a page-only row');
  assert.deepEqual(await send({ k: 'token' }, display), { ok: false });
  assert.equal(send({ k: 'connect' }, page), undefined, 'a page gets no answer from a tab-only row');
  assert.equal(send({ k: 'token' }, foreign), undefined, 'another extension gets nothing');
  assert.equal(send('not an object', tab), undefined, 'nothing recognizes it');
  assert.deepEqual(asked, [], 'no refused request ran');
  await send({ k: 'token' }, page);
  await send({ k: 'connect' }, tab);
  await send({ k: 'other' }, display);
  assert.deepEqual(asked, ['token', 'connect', 'any']);
});
