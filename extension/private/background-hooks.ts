// What background.ts calls for the private spam check: offer a decrypted
// webmail message (never awaited by the page's reply), and answer the
// options page and popup (connect, disconnect, status). Requests other than
// from extension pages are refused: the token never reaches a content script.
// Connecting starts the check of the mail already there at once (webmail tabs
// check their mailbox, Thunderbird scans its folders), and so does the
// provider's return after it could not be reached (provider-watch.ts).
import { t } from '../lib/i18n.js';
import browser, { type Runtime } from 'webextension-polyfill';
import { decryptedMessage } from '../../mail/decrypt.js';
import type { DecryptResult } from '../lib/decrypt.js';
import type { MailSource } from '../lib/messages.js';
import { route, type Route } from '../lib/router.js';
import { tellWebmailTabs } from '../lib/webmail-tabs.js';
import type { ThunderbirdApi } from '../thunderbird/api.js';
import { watchSpam, type SpamCheckDeps } from '../thunderbird/spam-check.js';
import { issuedToken } from '../content/adapters/adapter.js';
import { providerIdOf } from '../../mail/message-id.js';
import {
  connectFailureText,
  failureBadge,
  failureText,
  isTransient,
  outcomeBadge,
  RECONNECTED,
  spamCheckLines,
  withBlocklist,
} from './faults.js';
import { deliveredId } from './message-ref.js';
import {
  oneClickNeedsPermission,
  oneClickProvider,
  permissionRefused,
  providerAddress,
  providerPermission,
} from './provider-permission.js';
import { ProviderWatch } from './provider-watch.js';
import { packageLogStatus } from './log-status.js';
import { resumeKeptTopics } from './resume-kept.js';
import { giveUpToken, keepSignInAlive, signInWithMail } from './sign-in.js';
import { SpamQueue } from './spam-queue.js';
import { accountOf, type ProviderConfig } from './account.js';
import { PrivateStore } from './store.js';
import { WorkerCallError } from './worker-client.js';
import { privateWorker } from './worker-host.js';
import {
  BACKLOG_MAX_IDS,
  BACKLOG_UNCHECKED,
  SPAM_BADGE,
  SPAM_CHECK_READY,
  STATUS_CHANGED,
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
const live: Pick<PrivateStatus, 'model' | 'download' | 'lastError' | 'backlog'> = {};

/** Pages showing the status (options, popup) watch this key and refresh; at most a signal a second. */
let signalled = 0;
let signalLater: ReturnType<typeof setTimeout> | undefined;
function statusChanged(): void {
  const signal = () => {
    signalled = Date.now();
    signalLater = undefined;
    void browser.storage.local.set({ [STATUS_CHANGED]: signalled }).catch(() => {});
  };
  if (Date.now() - signalled >= 1000) signal();
  else signalLater ??= setTimeout(signal, 1000);
}

/** Worker failures come named; anything else (the worker would not start) is a generic failure. */
const failureOf = (e: unknown): WorkerFailure =>
  e instanceof WorkerCallError ? e.failure : { code: 'protocol', detail: e instanceof Error ? e.message : String(e) };

/** One batch for the private worker (the queues' and the start's). */
const classifyInWorker = async (
  provider: ProviderConfig,
  items: ClassifyItem[],
  onEvent: (e: WorkerEvent) => void,
): Promise<unknown> => (await privateWorker()).call({ kind: 'classify', provider, items }, onEvent);

/** Thunderbird's scan of mail not checked yet, when running there. */
let thunderbirdScan: (() => Promise<void>) | undefined;

/** The provider answers (again), or was just connected: the mail that waited is looked at. */
function ready(): void {
  void tellWebmailTabs(SPAM_CHECK_READY);
  void thunderbirdScan?.().catch((e: unknown) => console.warn('spam check:', (e as Error).name));
}

const watch: ProviderWatch = new ProviderWatch({
  store,
  retryKept: (): boolean => [queue, thunderbirdQueue].map((q) => q?.retry() ?? false).includes(true),
  probe: async () => {
    const provider = await (await store()).provider();
    if (provider) await (await privateWorker()).call({ kind: 'prepare', provider });
  },
  failureOf,
  ready,
  changed: statusChanged,
  alarms: browser.alarms,
});

/** What a batch's failure and an outcome change: the status line and the provider's health. */
const onFailure = (f: WorkerFailure): void => {
  // Waiting for the provider, or a refused token, is the health's to say; the rest is the last error.
  if (!isTransient(f.code) && f.code !== 'bad_token') live.lastError = { text: failureText(f.code), detail: f.detail };
  void watch.failed(f);
  statusChanged();
};
const onOutcome = (): void => {
  live.lastError = undefined;
  void watch.answered();
};
/** Nothing goes to a provider that refused the token until the user connects again. */
const refused = async (): Promise<boolean> => (await watch.health())?.state === 'refused';

/** The retry alarm (provider-health.ts RETRY_ALARM) fired: try the provider again. */
export const retryProvider = (): Promise<void> => watch.retry();

const queue: SpamQueue = new SpamQueue(
  {
    store,
    classify: classifyInWorker,
    notify: (target, sourceId, badge, fresh) =>
      void (async () => {
        const moveToJunk = fresh && badge.state === 'spam' && (await (await store()).settings()).moveSpam;
        const msg: SpamBadgeMessage = { type: SPAM_BADGE, sourceId, badge, moveToJunk };
        await browser.tabs.sendMessage(target.tabId, msg, { frameId: target.frameId });
      })().catch(() => {}),
    onFailure,
    onOutcome,
    refused,
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
 * Thunderbird: checks new and displayed mail the provider delivered, and
 * the mail not checked yet (thunderbird/spam-check.ts), with the same
 * worker, store and status line. Registered at the top level of the
 * background so the events wake it.
 */
export function watchThunderbirdSpam(
  api: ThunderbirdApi,
  decrypt: SpamCheckDeps['decrypt'],
  area: SpamCheckDeps['area'],
) {
  const tb = watchSpam(api, {
    area,
    store,
    classify: classifyInWorker,
    decrypt,
    failureOf,
    onFailure,
    onOutcome,
    refused,
    onProgress: (p) => {
      live.backlog = p;
      statusChanged();
    },
  });
  thunderbirdQueue = tb.queue;
  thunderbirdScan = () => tb.scan();
  return tb;
}

/**
 * At the background's start: topic requests a stopped worker kept are
 * shared now, not with the next batch of new mail (resume-kept.ts). The
 * worker is started only when there are some.
 */
export async function resumeKeptWork(): Promise<void> {
  await resumeKeptTopics(await store(), (provider, items) => classifyInWorker(provider, items, () => {}));
}

/** Thunderbird's banner: what the spam check found about the message `raw` (by the provider's id), if anything. */
export async function spamLinesOf(raw: string, inJunk: boolean): Promise<string[] | undefined> {
  const s = await store();
  const provider = await s.provider();
  const messageId = providerIdOf(raw);
  if (!provider || !messageId) return undefined;
  const account = accountOf(provider);
  const v = await s.verdict(account, messageId);
  if (!v) return undefined;
  const links = await s.blocklistOutcome(account, messageId);
  const badge = withBlocklist(outcomeBadge(v), links?.kind === 'looked-up' ? links.hits : []);
  return spamCheckLines(badge, inJunk, v.user !== undefined);
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

/**
 * Connects: the address in plain words if it is wrong, the model fetched
 * and a session opened (which proves address, token and package), then the
 * connection saved with the user's topic choice, and the mail already there
 * checked at once.
 */
async function connect(typed: string, token: string, topics?: boolean, signedIn = false): Promise<PrivateStatus> {
  const origin = providerAddress(typed);
  const provider: ProviderConfig = { url: origin, token, ...(signedIn && { signedIn: true }) };
  // The options page asked for it on the user's click; without it the worker could not fetch the model.
  const wanted = providerPermission(origin);
  if (wanted && !(await browser.permissions.contains(wanted))) throw new Error(permissionRefused(origin));
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
    // About what was just typed (the address, the token), not about a message: none was checked.
    const f = failureOf(e);
    live.lastError = { text: connectFailureText(f.code, origin), detail: f.detail };
    throw new Error(live.lastError.text);
  }
  const s = await store();
  await s.setProvider(provider);
  watch.forget();
  forgetAll(RECONNECTED); // nothing offered before goes out under the new token
  if (topics !== undefined) await s.setSettings({ topics });
  // Not sharing reaches the provider too (best effort: the worker honours it anyway).
  if (!(await s.settings()).topics) await tellTopicChoice(false).catch(() => {});
  ready(); // the mail already there is checked now, not at the next reload
  statusChanged();
  return status();
}

/** The user's answer to the topic question, when the request carries one. */
const topicsOf = (req: { topics?: unknown }): boolean | undefined =>
  typeof req.topics === 'boolean' ? req.topics : undefined;

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
    const why = topics ? 'err_topic_choice_not_told' : 'err_topic_choice_not_told_none_shared';
    throw new Error(t(why, failureText(f.code)));
  }
}

async function status(): Promise<PrivateStatus> {
  const s = await store();
  const provider = await s.provider();
  const today = new Date();
  today.setHours(0, 0, 0, 0);
  return {
    ...live,
    connected: provider !== undefined,
    provider: provider?.url,
    classifiedToday: provider ? await s.countVerdictsSince(accountOf(provider), today.getTime()) : 0,
    health: provider ? await watch.health() : undefined,
    held: queue.heldCount + (thunderbirdQueue?.heldCount ?? 0),
    ...(await s.settings()),
  };
}

async function handle(req: PrivateRequest): Promise<unknown> {
  switch (req.pmfPrivate) {
    case 'connect':
      if (typeof req.url !== 'string' || typeof req.token !== 'string' || !req.token.trim() || req.token.length > 4096)
        throw new Error(t('err_enter_address_and_token'));
      return connect(req.url, req.token.trim(), topicsOf(req));
    case 'signIn': {
      if (
        typeof req.address !== 'string' ||
        typeof req.password !== 'string' ||
        !req.password ||
        req.password.length > 1024
      )
        throw new Error(t('err_enter_mail_and_password'));
      const signedIn = await signInWithMail(req.address.trim(), req.password);
      return 'needsPermission' in signedIn ? signedIn : connect(signedIn.provider, signedIn.token, topicsOf(req), true);
    }
    case 'disconnect':
      await giveUpToken(await (await store()).provider());
      await (await store()).setProvider(undefined);
      watch.forget();
      statusChanged();
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
  if (connected) throw new Error(t('err_already_connected'));
  const { token, provider } =
    req[WEBMAIL_CONNECT] === 'roundcube'
      ? await roundcubeToken(req, sender.url!)
      : (req as { token?: unknown; provider?: unknown });
  const topics = (req as { topics?: unknown }).topics;
  if (typeof token !== 'string' || !token || token.length > 4096) throw new Error(t('err_webmail_gave_no_token'));
  const url = oneClickProvider(provider, sender.url!);
  const wanted = providerPermission(url);
  if (wanted && !(await browser.permissions.contains(wanted))) throw new Error(oneClickNeedsPermission(url));
  await connect(url, token, typeof topics === 'boolean' ? topics : undefined);
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

/** The connection's sign-in token is renewed while it is used; started once by background.ts. */
export function watchSignIn(): void {
  keepSignInAlive(
    async () => (await store()).provider(),
    () =>
      (live.lastError = {
        text: 'Your provider no longer accepts this connection (it expired or was revoked). Sign in again.',
        detail: 'GET /tokens: 401',
      }),
  );
}

const isObject = (m: unknown): m is Record<string, unknown> => typeof m === 'object' && m !== null;

/**
 * The private functions' rows of the background's router (lib/router.ts):
 * webmail pages' one-click connect and mailbox questions come from our
 * content script in a tab, never from an extension page; the options page
 * and popup's requests only from extension pages, the token never reaching
 * a content script.
 */
export const PRIVATE_ROUTES: readonly Route[] = [
  route({
    is: (m): m is WebmailConnectRequest => isObject(m) && typeof m[WEBMAIL_CONNECT] === 'string',
    from: ['tab'],
    answer: (m, sender) => reply(handleWebmail(m, sender)),
  }),
  route({
    is: (m): m is BacklogRequest => isObject(m) && BACKLOG_UNCHECKED in m,
    from: ['tab'],
    answer: (m, sender) => reply(uncheckedOf(m[BACKLOG_UNCHECKED], sender)),
  }),
  route({
    is: (m): m is UserVerdictRequest => isObject(m) && USER_VERDICT in m,
    from: ['tab'],
    answer: (m, sender) => reply(userVerdictOf(m, sender)),
  }),
  route({
    is: (m): m is PrivateRequest => isObject(m) && typeof m.pmfPrivate === 'string',
    from: ['page'],
    refusal: { ok: false, error: 'Only extension pages may change the provider connection.' },
    answer: (m) => reply(handle(m)),
  }),
];
