// The background (Chromium service worker, Firefox/Thunderbird event page):
// the only context holding unlocked private keys. Content scripts and pages
// send it requests (lib/messages.ts and the other vocabularies, one router:
// lib/router.ts); decrypted mail is indexed here for local search, so
// plaintext never travels further than the page showing it.
import { t } from '../lib/i18n.js';
import browser, { type Runtime } from 'webextension-polyfill';
import type { KeyContext } from '../../mail/decrypt.js';
import type { DecryptResult } from '../lib/decrypt.js';
import { decryptOffThread } from '../lib/decrypt-off-thread.js';
import { KeyError } from '../lib/errors.js';
import { toPlain } from '../lib/plain-error.js';
import { KeyStore } from '../lib/keystore.js';
import { KeepAwake } from '../lib/keep-awake.js';
import {
  KEYS_CHANGED,
  MAX_LISTED,
  TB_INDEX_PORT,
  validateDecryptRequest,
  isRequest,
  type BadgeInfo,
  type MailSource,
  type Reply,
  type Request,
  type Status,
  type ViewContent,
  VIEWER_HEIGHT,
  type ViewerHeightMessage,
} from '../lib/messages.js';
import { listen, route, senderKind, type SenderKind } from '../lib/router.js';
import { loadSecurityBackground } from '../lib/security-background.js';
import { viewerHeight } from '../lib/viewer-height.js';
import {
  changeSites,
  isWebmailSite,
  loadSites,
  registerSites,
  sitePermission,
  webmailOrigin,
} from '../lib/webmail-sites.js';
import { MailIndex } from '../lib/mail-index.js';
import { isSearchRequest } from '../search/index.js';
import { isRemoteSearchRequest, isRemoteSettingsRequest } from '../remote-search/messages.js';
import { RemoteSearch } from '../remote-search/remote-search.js';
import { PrivateStore } from '../private/store.js';
import {
  forgetWaitingMessages,
  offerForSpamCheck,
  PRIVATE_ROUTES,
  resumeKeptWork,
  retryProvider,
  spamLinesOf,
  watchSignIn,
  watchThunderbirdSpam,
} from '../private/background-hooks.js';
import { RETRY_ALARM } from '../private/provider-health.js';
import { signalLocked, signalUnlocked } from '../lib/lock-signal.js';
import { loadSettings } from '../lib/settings.js';
import { EXPIRY_ALARM, UnlockCache } from '../lib/unlock-cache.js';
import { thunderbird } from '../thunderbird/api.js';
import { describeDisplayedMessage, indexThunderbirdMail, type Deps } from '../thunderbird/displayed-message.js';
import { watchMail } from '../thunderbird/live-index.js';
import { showBannerInMessages } from '../thunderbird/register-banner.js';
import { tellWebmailTabs } from '../lib/webmail-tabs.js';
import { fetchPageFor } from './page-fetch.js';
import { ViewStore, type ViewRoute } from './views.js';

let storePromise: Promise<KeyStore> | undefined;
const keyStore = () => (storePromise ??= KeyStore.open());
const cache = new UnlockCache(
  { list: async () => (await keyStore()).list(), unlock: async (fp, p) => (await keyStore()).unlock(fp, p) },
  browser.storage.session,
  Date.now,
  browser.alarms,
  () => lockDown(),
);
// The expiry alarm wakes a stopped background, which then drops the expired keys; the retry alarm,
// to try a provider that could not be reached again.
browser.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === EXPIRY_ALARM) void cache.expire();
  if (alarm.name === RETRY_ALARM) void retryProvider();
});

const mailIndex = new MailIndex(
  () => cache.indexKey(),
  (key) => cache.setIndexKey(key),
);
// Search of all mail: what is decrypted here also goes to the encrypted index at the connected provider.
let privateStore: Promise<PrivateStore> | undefined;
const remoteSearch = new RemoteSearch({
  provider: async () => (await (privateStore ??= PrivateStore.open())).provider(),
  keys: async () => [...(await cache.keys()).values()],
});

async function keyContext(): Promise<KeyContext> {
  const store = await keyStore();
  const unlockedKeys = await cache.keys();
  const lockedKeyIds = new Set<string>();
  for (const k of await store.list())
    if (k.hasPrivate && !unlockedKeys.has(k.fingerprint)) k.keyIds.forEach((id) => lockedKeyIds.add(id));
  return { unlocked: [...unlockedKeys.values()], lockedKeyIds, verificationKeys: await store.verificationKeys() };
}

/** Indexing must not hide a successful decryption; log only the error kind. */
async function indexQuietly(source: MailSource, text: string, subject?: string): Promise<void> {
  await mailIndex.add(source, text, subject).catch((e: unknown) => console.warn('search index:', (e as Error).name));
  remoteSearch.offer(source, text, subject);
}

/** Work someone waits for (a request, a message being decrypted) keeps the background from being stopped. */
const keepAwake = new KeepAwake(() => browser.runtime.getPlatformInfo());
const awake = <T>(work: Promise<T>) => keepAwake.during(work);

/** A block decrypted (a large one off this thread), the background kept awake meanwhile. */
const decryptBlock = async (block: Parameters<typeof decryptOffThread>[0], from?: string) =>
  awake(decryptOffThread(block, await keyContext(), from));

/** The badge result, and the decrypted data for the private spam check (it never goes to a page). */
async function decryptAndIndex(
  block: Parameters<typeof decryptOffThread>[0],
  source: MailSource,
): Promise<{ result: DecryptResult; plaintext?: string }> {
  const opened = await decryptBlock(block, source.from);
  const { result } = opened;
  if (result.status === 'decrypted' && result.text !== undefined) {
    await indexQuietly(source, result.text, result.subject);
  }
  return opened;
}

/** Outcomes waiting for their viewer frame (views.ts): single use, bound to the asking tab and frame. */
const views = new ViewStore();

/**
 * What goes when keys are locked or expire, whichever comes first: the index closes, pending
 * views are dropped, and open views (viewer frames, Thunderbird's banner) wipe the text they
 * show (they cannot fetch it again).
 */
async function lockDown(): Promise<void> {
  views.clear();
  forgetWaitingMessages();
  await signalLocked();
  await mailIndex.close();
  remoteSearch.close();
}

/** The badge for the content script; with a view id when a viewer frame will show the outcome. */
function toBadge(result: DecryptResult, route?: ViewRoute): BadgeInfo {
  const { text: _t, subject: _s, attachments: _a, ...badge } = result;
  return route ? { ...badge, viewId: views.add(result, route) } : badge;
}

/**
 * A webmail list's hidden subjects, each as a view for viewer.html (?line):
 * the content script gets view ids, never the subjects, and only for
 * messages of its own site.
 */
async function listedSubjects(ids: unknown, sender: Runtime.MessageSender): Promise<Record<string, string>> {
  if (!Array.isArray(ids) || ids.length > MAX_LISTED) throw new Error('Invalid request.');
  if (!(await isWebmailSite(browser.storage.local, sender.url))) throw new Error(t('err_not_a_webmail_site'));
  const { tab, frameId } = sender;
  if (tab?.id === undefined || frameId === undefined) return {};
  const route = { tabId: tab.id, frameId };
  const site = new URL(sender.url ?? 'about:blank').origin;
  const own = ids.filter(
    (id): id is string =>
      typeof id === 'string' && id.length <= 4096 && URL.canParse(id) && new URL(id).origin === site,
  );
  const out: Record<string, string> = {};
  for (const [id, subject] of await mailIndex.subjects(own))
    if (subject)
      out[id] = toBadge(
        {
          status: 'decrypted',
          summary: '',
          signature: { status: 'unsigned' },
          subject,
          text: '',
        },
        route,
      ).viewId!;
  return out;
}

async function status(): Promise<Status> {
  const keys = await (await keyStore()).list();
  return {
    privateKeys: keys.filter((k) => k.hasPrivate).length,
    unlocked: (await cache.keys()).size,
    expiresAt: await cache.expiresAt(),
    unlockMinutes: (await loadSettings()).unlockMinutes,
  };
}

/** Options → Webmail sites: a site other than this computer only once the user allowed its host. */
async function changeWebmailSites(req: { add?: unknown; remove?: unknown }): Promise<string[]> {
  const add = typeof req.add === 'string' ? webmailOrigin(req.add) : undefined;
  const wanted = add === undefined ? undefined : sitePermission(add);
  if (add && wanted && !(await browser.permissions.contains(wanted)))
    throw new Error(t('err_site_not_allowed', new URL(add).host));
  const remove = typeof req.remove === 'string' ? req.remove : undefined;
  const sites = await changeSites(browser.storage.local, { add, remove });
  await registerSites(browser.scripting, sites);
  return sites;
}

const thunderbirdDeps: Deps = {
  decrypt: async (block, source) => (await decryptAndIndex(block, source)).result,
  index: (source, text, subject) => indexQuietly(source, text, subject),
  spamLines: spamLinesOf,
};

/** Requests only extension pages may make, each with what anyone else is told. */
const PAGE_ONLY: { readonly [T in Request['type']]?: string } = {
  view: 'Only extension pages may read decrypted mail.',
  unlock: 'Only extension pages may unlock keys.',
  lock: 'Only extension pages may lock keys.',
  'keys-changed': 'Only extension pages may change keys.',
  'webmail-sites': 'Only extension pages may change the webmail sites.',
  'tb-displayed-message': 'Only extension pages may read Thunderbird messages.',
};

async function handle(req: Request, sender: Runtime.MessageSender, kind: SenderKind): Promise<unknown> {
  const page = kind === 'page';
  const pageOnly = PAGE_ONLY[req.type];
  if (pageOnly && !page) throw new Error(pageOnly);
  switch (req.type) {
    case 'decrypt': {
      const { block, source } = validateDecryptRequest(req);
      if (!page && !(await isWebmailSite(browser.storage.local, sender.url)))
        throw new Error(t('err_not_a_webmail_site'));
      // A content script may only describe mail of the site it runs on.
      if (!page && new URL(source.url).origin !== new URL(sender.url ?? 'about:blank').origin) {
        throw new Error("Message URL is not on this page's site.");
      }
      const { result, plaintext } = await decryptAndIndex(block, source);
      offerForSpamCheck(source, result, plaintext, sender); // mailbox indexing (indexOnly) classifies a backlog too
      const { tab, frameId } = sender;
      // Every outcome, not only a decryption, is shown by a viewer frame: the page sees the same box either way.
      return toBadge(
        result,
        req.indexOnly || tab?.id === undefined || frameId === undefined ? undefined : { tabId: tab.id, frameId },
      );
    }
    case 'view': {
      return { result: views.take(req.viewId, sender), security: await loadSecurityBackground() } satisfies ViewContent;
    }
    case 'viewer-height': {
      const to = page ? views.heightRoute(req.viewId, sender) : undefined;
      const msg: ViewerHeightMessage = { type: VIEWER_HEIGHT, viewId: req.viewId, height: viewerHeight(req.height) };
      if (to) browser.tabs.sendMessage(to.tabId, msg, { frameId: to.frameId }).catch(() => {});
      return true;
    }
    case 'status':
      return status();
    case 'unlock': {
      if (typeof req.passphrase !== 'string' || req.passphrase.length > 4096)
        throw new KeyError('bad-input', t('err_invalid_passphrase'));
      const opened = await cache.unlock(req.passphrase, (await loadSettings()).unlockMinutes * 60_000);
      // Mail that arrived while locked is indexed once the index is open: deriving its key takes a moment.
      void mailIndex.unlock(req.passphrase).then(catchUpNewMail);
      await tellWebmailTabs(KEYS_CHANGED); // they retry messages that were locked
      void signalUnlocked(); // Thunderbird's banners that said "locked" read their message again
      void thunderbirdSpam?.scan(); // mail not checked yet (it arrived while locked): checked for spam now
      return opened.length;
    }
    case 'lock':
      await cache.lock();
      await lockDown();
      return true;
    case 'keys-changed':
      for (const fp of req.deleted ?? []) await cache.forget(fp);
      await tellWebmailTabs(KEYS_CHANGED); // they retry messages that were locked
      return true;
    case 'fetch-page':
      if (typeof req.url !== 'string') throw new Error('Invalid request.');
      if (!(await isWebmailSite(browser.storage.local, sender.url))) throw new Error(t('err_not_a_webmail_site'));
      return fetchPageFor(req.url, sender.tab?.url);
    case 'webmail-sites':
      return changeWebmailSites(req);
    case 'tb-displayed-message':
      return describeDisplayedMessage(req.tabId, thunderbirdDeps);
    case 'list-subjects':
      return listedSubjects(req.ids, sender);
    case 'open-unlock':
      // From a banner or page that says "locked": the settings page, at its unlock form.
      await browser.tabs.create({ url: browser.runtime.getURL('options.html#unlock-panel') });
      return true;
    case 'tb-this-message':
      // The message display script asks about the message in its own tab only.
      if (sender.tab?.id === undefined) throw new Error(t('tb_select_message'));
      return describeDisplayedMessage(sender.tab.id, thunderbirdDeps);
    default:
      throw new Error('Unknown request.');
  }
}

// The one listener: search pages speak their own small protocols, the private
// functions theirs (private/background-hooks.ts), the rest lib/messages.ts.
listen(browser.runtime, [
  route({ is: isSearchRequest, from: ['page'], answer: (m) => mailIndex.answer(m) }),
  route({ is: isRemoteSearchRequest, from: ['page'], answer: (m) => remoteSearch.answer(m) }),
  route({ is: isRemoteSettingsRequest, from: ['page'], answer: (m) => remoteSearch.settingsAnswer(m) }),
  ...PRIVATE_ROUTES,
  route({
    is: isRequest,
    from: ['page', 'tab', 'extension'],
    answer: (req, sender, kind) =>
      awake(handle(req, sender, kind)).then(
        (value): Reply<unknown> => ({ ok: true, value }),
        (e: unknown): Reply<unknown> => {
          const { message, detail } = toPlain(e);
          return { ok: false, error: message, detail, code: e instanceof KeyError ? e.code : undefined };
        },
      ),
  }),
]);

watchSignIn();
void resumeKeptWork().catch((e: unknown) => console.warn('kept topic requests:', (e as Error).name));

// Thunderbird: index all mail, streaming progress to the options page.
browser.runtime.onConnect.addListener((port) => {
  if (port.name !== TB_INDEX_PORT || !port.sender || senderKind(browser.runtime, port.sender) !== 'page') return;
  let open = true;
  port.onDisconnect.addListener(() => (open = false));
  const post = (msg: unknown) => open && port.postMessage(msg);
  // Pause stops after the current message; the next run skips what is indexed.
  let paused = false;
  port.onMessage.addListener((msg: unknown) => void (paused ||= (msg as { pause?: unknown })?.pause === true));
  const control = { paused: () => paused, isIndexed: (id: string) => mailIndex.has(id) };
  // The result (done, paused or failed) is reported once what was indexed is written: a
  // crash before that loses only the last messages, which the next run (isIndexed) adds again.
  indexThunderbirdMail(thunderbirdDeps, (progress) => post({ progress }), undefined, control)
    .finally(() => mailIndex.flush().catch((e: unknown) => console.warn('search index:', (e as Error).name)))
    .then(
      (result) => post({ result }),
      (e: unknown) => post({ error: toPlain(e).message }),
    );
});

// Thunderbird: index new mail as it arrives, follow moves and deletions.
const tbApi = thunderbird();
const catchUpNewMail = tbApi
  ? watchMail(
      tbApi,
      thunderbirdDeps,
      {
        isOpen: async () => (await cache.indexKey()) !== undefined,
        has: (id) => mailIndex.has(id),
        // Thunderbird's deletions leave the remote index too (its ids are the local index's).
        remove: (id) => Promise.all([mailIndex.remove(id), remoteSearch.forget([id])]),
      },
      browser.storage.local,
    )
  : () => {};
let thunderbirdSpam: ReturnType<typeof watchThunderbirdSpam> | undefined;
// The content script runs only on the webmail sites the user added (lib/webmail-sites.ts); Thunderbird has none.
if (!tbApi)
  void loadSites(browser.storage.local)
    .then((sites) => registerSites(browser.scripting, sites))
    .catch((e: unknown) => console.warn('webmail sites:', (e as Error).message));
if (tbApi) {
  // The private spam check of new and displayed mail the provider delivered (thunderbird/spam-check.ts).
  thunderbirdSpam = watchThunderbirdSpam(
    tbApi,
    async (block) => {
      const { result, plaintext } = await decryptBlock(block);
      if (result.status === 'locked') return 'locked';
      return result.status === 'decrypted' ? plaintext : undefined;
    },
    browser.storage.local,
  );
  // Mail not checked yet: it arrived while Thunderbird was closed, the keys locked or the provider down;
  // and not indexed yet, if a restarted background finds the keys still unlocked.
  void thunderbirdSpam.scan();
  catchUpNewMail();
  // Registrations live only while the add-on runs: make them each time the background starts,
  // and have it start with Thunderbird (an MV3 event page otherwise sleeps until an event).
  void showBannerInMessages(tbApi).catch((e: unknown) => console.warn('message banner:', (e as Error).name));
  browser.runtime.onStartup.addListener(() => {});
}

// First run: explain what the add-on does and walk through setting it up.
browser.runtime.onInstalled.addListener(({ reason }) => {
  if (reason === 'install') void browser.tabs.create({ url: browser.runtime.getURL('welcome.html') });
});
