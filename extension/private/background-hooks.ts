// What background.ts calls for the private spam check: offer a decrypted
// webmail message (never awaited by the page's reply), and answer the
// options page and popup (connect, disconnect, status). Requests other than
// from extension pages are refused: the token never reaches a content script.
import browser, { type Runtime } from 'webextension-polyfill';
import { sessionUrl } from '../../client/core/connect.js';
import { decryptedMessage } from '../../mail/decrypt.js';
import type { DecryptResult } from '../lib/decrypt.js';
import type { MailSource } from '../lib/messages.js';
import type { ThunderbirdApi } from '../thunderbird/api.js';
import { watchSpam, type SpamCheckDeps } from '../thunderbird/spam-check.js';
import { issuedToken } from '../content/adapters/adapter.js';
import { failureBadge, failureText, RECONNECTED } from './faults.js';
import { deliveredId } from './message-ref.js';
import {
  oneClickNeedsPermission,
  oneClickProvider,
  permissionRefused,
  providerPermission,
} from './provider-permission.js';
import { packageLogStatus } from './log-status.js';
import { resumeKeptTopics } from './resume-kept.js';
import { giveUpToken, keepSignInAlive, signInWithMail } from './sign-in.js';
import { SpamQueue } from './spam-queue.js';
import { accountOf, PrivateStore, type PrivateSettings, type ProviderConfig } from './store.js';
import { WorkerCallError } from './worker-client.js';
import { privateWorker } from './worker-host.js';
import {
  BACKLOG_MAX_IDS,
  BACKLOG_UNCHECKED,
  SPAM_BADGE,
  USER_VERDICT,
  WEBMAIL_CONNECT,
  type BacklogRequest,
  type PrivateRequest,
  type PrivateStatus,
  type SpamBadgeMessage,
  type UserVerdictRequest,
  type WebmailConnectRequest,
} from './messages.js';
import type { ClassifyItem, WorkerEvent, WorkerFailure } from './worker-protocol.js';

let storePromise: Promise<PrivateStore> | undefined;
const store = (): Promise<PrivateStore> => (storePromise ??= PrivateStore.open());

/** In memory only: what the options page and popup show. */
const live: Omit<PrivateStatus, 'connected' | 'provider' | 'classifiedToday' | keyof PrivateSettings> = {};

/** Worker failures come named; anything else (the worker would not start) is a generic failure. */
const failureOf = (e: unknown): WorkerFailure =>
  e instanceof WorkerCallError ? e.failure : { code: 'protocol', detail: e instanceof Error ? e.message : String(e) };

/** One batch for the private worker (the queues' and the start's). */
const classifyInWorker = async (
  provider: ProviderConfig,
  items: ClassifyItem[],
  onEvent: (e: WorkerEvent) => void,
): Promise<unknown> => (await privateWorker()).call({ kind: 'classify', provider, items }, onEvent);

const queue = new SpamQueue(
  {
    store,
    classify: classifyInWorker,
    notify: (target, sourceId, badge, fresh) =>
      void (async () => {
        const moveToJunk = fresh && badge.state === 'spam' && (await (await store()).settings()).moveSpam;
        const msg: SpamBadgeMessage = { type: SPAM_BADGE, sourceId, badge, moveToJunk };
        await browser.tabs.sendMessage(target.tabId, msg, { frameId: target.frameId });
      })().catch(() => {}),
    onFailure: (f) => (live.lastError = { text: failureText(f.code), detail: f.detail }),
    onOutcome: () => (live.lastError = undefined),
  },
  failureOf,
);

/** Thunderbird's queue of new and displayed mail, when running there. */
let thunderbirdQueue: SpamQueue | undefined;

/** Drops the decrypted messages not yet handed to the worker, in every queue. */
function forgetAll(why?: Parameters<SpamQueue['forgetWaiting']>[0]): void {
  queue.forgetWaiting(why);
  thunderbirdQueue?.forgetWaiting(why);
}

/**
 * Thunderbird: checks new and displayed mail the provider delivered
 * (thunderbird/spam-check.ts) with the same worker, store and status line.
 * Registered at the top level of the background so the events wake it.
 */
export function watchThunderbirdSpam(
  api: ThunderbirdApi,
  decrypt: SpamCheckDeps['decrypt'],
  pending: SpamCheckDeps['pending'],
) {
  const watch = watchSpam(api, {
    pending,
    store,
    classify: classifyInWorker,
    decrypt,
    failureOf,
    onFailure: (f) => (live.lastError = { text: failureText(f.code), detail: f.detail }),
    onOutcome: () => (live.lastError = undefined),
  });
  thunderbirdQueue = watch.queue;
  return watch;
}

/**
 * At the background's start: topic requests a stopped worker kept are
 * shared now, not with the next batch of new mail (resume-kept.ts). The
 * worker is started only when there are some.
 */
export async function resumeKeptWork(): Promise<void> {
  await resumeKeptTopics(await store(), (provider, items) => classifyInWorker(provider, items, () => {}));
}

/** The outer headers the page shows, as the CLI reads them from the raw message (no line breaks smuggled in). */
function outerHeaders(s: MailSource): string {
  const clean = (v: string | undefined) => (v ?? '').replace(/[\r\n]+/g, ' ');
  return `From: ${clean(s.from)}\r\nTo: ${clean(s.to)}\r\nSubject: ${clean(s.subject)}\r\nDate: ${clean(s.date)}\r\n\r\n`;
}

/** On lock: decrypted messages still waiting for the worker are dropped. */
export function forgetWaitingMessages(): void {
  forgetAll();
}

/** Called for every decrypt request from a content script; returns at once. */
export function offerForSpamCheck(
  source: MailSource,
  result: DecryptResult,
  plaintext: string | undefined,
  sender: Runtime.MessageSender,
): void {
  if (result.status !== 'decrypted' || plaintext === undefined || sender.tab?.id === undefined) return;
  const target = { tabId: sender.tab.id, frameId: sender.frameId };
  void (async () => {
    if (!(await (await store()).settings()).spamCheck) return; // off: nothing is offered, nothing leaves
    const provider = await (await store()).provider();
    const messageId = provider && deliveredId(source, provider.url);
    if (!provider || !messageId) return;
    await queue.offer(provider, messageId, decryptedMessage(outerHeaders(source), plaintext), target, source.id);
  })().catch((e: unknown) => console.warn('spam check:', (e as Error).name));
}

async function connect(url: string, token: string, signedIn = false): Promise<PrivateStatus> {
  sessionUrl(url); // throws in plain words for a non-loopback http:// or another scheme
  const provider: ProviderConfig = { url: new URL(url).origin, token, ...(signedIn && { signedIn: true }) };
  // The options page asked for it on the user's click; without it the worker could not fetch the model.
  const wanted = providerPermission(url);
  if (wanted && !(await browser.permissions.contains(wanted))) throw new Error(permissionRefused(url));
  live.download = undefined;
  try {
    const worker = await privateWorker();
    await worker.call({ kind: 'reset' });
    const model = await worker.call({ kind: 'prepare', provider }, (e) => {
      if (e.event === 'download') live.download = { received: e.received, total: e.total };
    });
    live.model = {
      id: model.modelId,
      version: model.modelVersion,
      bytes: model.packageBytes,
      readyMs: model.readyMs,
      downloaded: model.downloaded,
    };
    live.lastError = undefined;
  } catch (e) {
    const f = failureOf(e);
    live.lastError = { text: failureText(f.code), detail: f.detail };
    throw new Error(live.lastError.text);
  }
  await (await store()).setProvider(provider);
  forgetAll(RECONNECTED); // nothing offered before goes out under the new token
  // An opt-out chosen before connecting reaches the provider too (best effort: the worker honours it anyway).
  if (!(await (await store()).settings()).topics) await tellTopicChoice(false).catch(() => {});
  return status();
}

/**
 * The topic opt-out is the provider's to honour too (docs/protocol.md#topic-extraction):
 * tell it now. Locally the choice holds at once either way (the worker reads it).
 */
async function tellTopicChoice(topics: boolean): Promise<void> {
  const provider = await (await store()).provider();
  if (!provider) return;
  try {
    await (await privateWorker()).call({ kind: 'topic-setting', provider, optOut: !topics });
  } catch (e) {
    const f = failureOf(e);
    const meanwhile = topics ? '' : ' No topic is shared from this browser meanwhile.';
    throw new Error(`Saved here, but your provider could not be told: ${failureText(f.code)}${meanwhile}`);
  }
}

async function status(): Promise<PrivateStatus> {
  const provider = await (await store()).provider();
  const today = new Date();
  today.setHours(0, 0, 0, 0);
  return {
    ...live,
    connected: provider !== undefined,
    provider: provider?.url,
    classifiedToday: provider ? await (await store()).countVerdictsSince(accountOf(provider), today.getTime()) : 0,
    ...(await (await store()).settings()),
  };
}

async function handle(req: PrivateRequest): Promise<unknown> {
  switch (req.pmfPrivate) {
    case 'connect':
      if (typeof req.url !== 'string' || typeof req.token !== 'string' || !req.token.trim() || req.token.length > 4096)
        throw new Error('Enter the provider’s address and your access token.');
      return connect(req.url.trim(), req.token.trim());
    case 'signIn': {
      if (
        typeof req.address !== 'string' ||
        typeof req.password !== 'string' ||
        !req.password ||
        req.password.length > 1024
      )
        throw new Error('Enter your mail address and its password.');
      const signedIn = await signInWithMail(req.address.trim(), req.password);
      return 'needsPermission' in signedIn ? signedIn : connect(signedIn.provider, signedIn.token, true);
    }
    case 'disconnect':
      await giveUpToken(await (await store()).provider());
      await (await store()).setProvider(undefined);
      forgetAll(RECONNECTED);
      await (await privateWorker()).call({ kind: 'reset' });
      live.model = live.download = live.lastError = undefined;
      return status();
    case 'settings': {
      const before = await (await store()).settings();
      const s = await (
        await store()
      ).setSettings({ spamCheck: req.spamCheck, moveSpam: req.moveSpam, topics: req.topics, linkCheck: req.linkCheck });
      if (!s.spamCheck) forgetAll(failureBadge('spam_off', 'turned off while waiting'));
      if (s.topics !== before.topics) await tellTopicChoice(s.topics);
      return status();
    }
    case 'status':
      return status();
    case 'packageLog':
      if (req.policy !== undefined) await (await store()).setWitnessPolicy(req.policy ?? undefined);
      return packageLogStatus(await store());
  }
}

/**
 * One-click connect from a webmail page, only while not connected, so a page
 * cannot switch an existing connection elsewhere. The provider is the page's
 * own origin, or the origin the webmail's server named with the token
 * (oneClickProvider); one the browser has not allowed yet (not loopback, not
 * granted on the options page) is refused, so no page can point the extension
 * at a provider the user never approved. Answers the provider's host.
 */
async function handleWebmail(req: WebmailConnectRequest, sender: Runtime.MessageSender): Promise<unknown> {
  const connected = (await (await store()).provider()) !== undefined;
  if (req[WEBMAIL_CONNECT] === 'offer') return !connected;
  if (connected) throw new Error('Already connected to a provider.');
  const { token, provider } =
    req[WEBMAIL_CONNECT] === 'roundcube'
      ? await roundcubeToken(req, sender.url!)
      : (req as { token?: unknown; provider?: unknown });
  if (typeof token !== 'string' || !token || token.length > 4096) throw new Error('The webmail gave no token.');
  const url = oneClickProvider(provider, sender.url!);
  const wanted = providerPermission(url);
  if (wanted && !(await browser.permissions.contains(wanted))) throw new Error(oneClickNeedsPermission(url));
  await connect(url, token);
  return new URL(url).host;
}

/**
 * Asks Roundcube's pmf_connect for the user's token from here, not from the
 * page: this request carries the extension's Origin, which the plugin
 * requires, so no script on the webmail's pages can get a token, and the
 * answer never reaches the page. Only the asking page's own origin, with its
 * request token (Roundcube's CSRF guard) and its cookies.
 */
async function roundcubeToken(req: { action?: unknown; requestToken?: unknown }, pageUrl: string) {
  const { action, requestToken } = req;
  if (typeof action !== 'string' || typeof requestToken !== 'string' || !/^[\x21-\x7e]{1,256}$/.test(requestToken))
    throw new Error('Invalid request.');
  const url = new URL(action);
  if (url.origin !== new URL(pageUrl).origin) throw new Error('The webmail asked for a token elsewhere than itself.');
  return issuedToken(
    await fetch(url, { method: 'POST', credentials: 'include', headers: { 'X-Roundcube-Request': requestToken } }),
  );
}

/** The listed messages of the asking tab's webmail that have no spam-check outcome yet. */
async function uncheckedOf(sourceIds: unknown, sender: Runtime.MessageSender): Promise<string[]> {
  if (!Array.isArray(sourceIds) || sourceIds.length > BACKLOG_MAX_IDS) throw new Error('Invalid request.');
  const s = await store();
  const provider = await s.provider();
  if (!provider || !(await s.settings()).spamCheck) return [];
  const account = accountOf(provider);
  const out: string[] = [];
  for (const id of sourceIds) {
    if (typeof id !== 'string') continue;
    const messageId = deliveredId({ id, url: sender.url! }, provider.url);
    if (messageId && !(await s.verdict(account, messageId))) out.push(id);
  }
  return out;
}

/** The webmail's _Not spam_: the user's word, kept with the message's verdict in this tab's account. */
async function userVerdictOf(req: UserVerdictRequest, sender: Runtime.MessageSender): Promise<boolean> {
  if (typeof req[USER_VERDICT] !== 'string' || typeof req.spam !== 'boolean') throw new Error('Invalid request.');
  const s = await store();
  const provider = await s.provider();
  const messageId = provider && deliveredId({ id: req[USER_VERDICT], url: sender.url! }, provider.url);
  return !!provider && !!messageId && s.markByUser(accountOf(provider), messageId, req.spam);
}

const reply = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ ok: true, value }),
    (e: unknown) => ({ ok: false, error: e instanceof Error ? e.message : 'Unexpected error' }),
  );

/** Answers the options page and popup, and webmail pages' one-click connect; registered once by background.ts. */
export function listenForPrivateRequests(): void {
  keepSignInAlive(
    async () => (await store()).provider(),
    () =>
      (live.lastError = {
        text: 'Your provider no longer accepts this connection (it expired or was revoked). Sign in again.',
        detail: 'GET /tokens: 401',
      }),
  );
  browser.runtime.onMessage.addListener((msg: unknown, sender: Runtime.MessageSender) => {
    const web = msg as (WebmailConnectRequest & BacklogRequest & UserVerdictRequest) | null;
    // From our content script in a tab, never from an extension page.
    const tab = sender.id === browser.runtime.id && sender.tab !== undefined && /^https?:/.test(sender.url ?? '');
    if (typeof web === 'object' && web !== null && typeof web[WEBMAIL_CONNECT] === 'string')
      return tab ? reply(handleWebmail(web, sender)) : undefined;
    if (typeof web === 'object' && web !== null && BACKLOG_UNCHECKED in web)
      return tab ? reply(uncheckedOf(web[BACKLOG_UNCHECKED], sender)) : undefined;
    if (typeof web === 'object' && web !== null && USER_VERDICT in web)
      return tab ? reply(userVerdictOf(web, sender)) : undefined;
    const req = msg as PrivateRequest | null;
    if (typeof req !== 'object' || req === null || typeof req.pmfPrivate !== 'string') return undefined;
    const page = sender.id === browser.runtime.id && (sender.url ?? '').startsWith(browser.runtime.getURL(''));
    if (!page) return Promise.resolve({ ok: false, error: 'Only extension pages may change the provider connection.' });
    return reply(handle(req));
  });
}
