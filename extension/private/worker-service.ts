// Runs inside the WASM worker: client/core's connector, session and runner
// (the CLI's code) with the extension's IndexedDB for packages, log trust,
// key-switching keys, verdicts and the topic replay log. One spam and one
// topic connector per account, so the models stay loaded between batches; a
// verdict is recorded before it is reported, so a restarted background finds
// it. After the spam check, the messages that got a verdict go to the link
// check (private/blocklist-check.ts) over the same session unless it is
// turned off (one hello less per batch), then to topic
// extraction unless the user opted out (settings are read here, from
// IndexedDB, so a request queued before a change still obeys it). Spam is
// not topic-extracted: what the check or the blocklist sends to Junk is of
// no topic the user reads.
import { createConnector, type Connector } from '../../client/core/connect.js';
import { PackageIntegrityError } from '../../client/core/download.js';
import { FloodLedger } from '../../client/core/flood-ledger.js';
import { KEPT_FOR_MS, runJournal, topicJournal, type RunJournal } from '../../client/core/kept-requests.js';
import { PackageLogAlert, PackageLogVerifier } from '../../client/core/package-log.js';
import { onPacedWait, sharePace } from '../../client/core/pacer.js';
import { runClassification, type RunOutcome } from '../../client/core/runner.js';
import { ConnectionClosed } from '../../client/core/interrupted-request.js';
import type { SocketLike } from '../../client/core/provider-session.js';
import type { SpamSession } from '../../client/core/session.js';
import { ReplayLog } from '../../client/core/topic-replay.js';
import {
  topicConnector,
  type TopicResult,
  type TopicSession,
  type TopicModel,
} from '../../client/core/topic-session.js';
import { ProtocolError } from '../../protocol/errors.js';
import { loadHe } from '../../wasm/ts/he.js';
import { LinkChecker } from './blocklist-check.js';
import { alone } from './worker-lock.js';
import { accountOf, type ProviderConfig } from './account.js';
import { PrivateStore } from './store.js';
import type {
  BlocklistOutcome,
  ItemOutcome,
  PrepareResult,
  TopicOutcome,
  WorkerEnvelope,
  WorkerEvent,
  WorkerFailure,
  WorkerRequest,
} from './worker-protocol.js';

/**
 * The package is kept in IndexedDB: a second copy in the HTTP cache would
 * waste disk and, once bad, keep being served from there (immutable caching).
 */
const fetchUncached: typeof fetch = (input, init) => fetch(input, { ...init, cache: 'no-store' });

/** How long the runner keeps reconnecting before telling the user the provider is down. */
const RECONNECT_WINDOW_MS = 3000;

let storePromise: Promise<PrivateStore> | undefined;
const privateStore = (): Promise<PrivateStore> => (storePromise ??= PrivateStore.open());
/** One account's connectors; the progress callback follows the current request. */
interface Slot {
  account: string;
  connector: Connector;
  /** The spam requests this account's runs keep until their outcome is stored. */
  journal: RunJournal;
  topics: Promise<Connector<TopicModel, TopicSession>>;
  /** The topic requests kept likewise, of messages resumed at a later batch (their spam verdict is stored). */
  topicJournal: RunJournal;
  links: LinkChecker;
  onProgress: (r: number, t: number) => void;
}
let current: Slot | undefined;

/** Frees (and so wipes) the models and this user's key-switching keys in WASM memory. */
async function dispose(slot: Slot | undefined): Promise<void> {
  const loaded = [slot?.connector.model(), (await slot?.topics.catch(() => undefined))?.model()];
  for (const m of loaded) {
    m?.model.dispose();
    m?.userKey?.ksk.dispose();
  }
}

async function slotFor(provider: ProviderConfig, emit: (e: WorkerEvent) => void): Promise<Slot> {
  const account = accountOf(provider);
  if (current?.account !== account) {
    const store = await privateStore();
    const he = await loadHe();
    const verifier = new PackageLogVerifier({
      baseUrl: provider.url,
      trust: store.trust,
      policy: () => store.witnessPolicy(),
      fetch: fetchUncached,
    });
    const common = {
      server: provider.url,
      token: provider.token,
      he,
      storage: store.packages,
      fetch: fetchUncached,
      socket: (url: string) => new WebSocket(url) as unknown as SocketLike,
      logCheck: (pkg: Parameters<PackageLogVerifier['checkPackage']>[0]) => verifier.checkPackage(pkg),
      onDownloadProgress: (r: number, t: number) => slot.onProgress(r, t),
      userKeys: {
        get: (pkgKey: string) => store.userKey(account, pkgKey),
        put: (pkgKey: string, k: { epoch: number; ksk: Uint8Array }) => store.putUserKey(account, pkgKey, k),
      },
      flood: new FloodLedger(store.flood),
    };
    // Unsettled after a week, a kept request can no longer be answered (the provider's answer retention).
    await store.dropStaleKept(Date.now() - KEPT_FOR_MS);
    const kept = store.keptRequests(account);
    const keptTopics = store.keptTopicRequests(account);
    const connector = createConnector({ ...common, kept });
    const slot: Slot = {
      account,
      onProgress: (_r: number, _t: number) => {},
      connector,
      journal: runJournal(he.core, kept),
      topics: ReplayLog.open(store.replay).then((replay) => topicConnector({ ...common, replay, keptTopics })),
      topicJournal: topicJournal(he.core, keptTopics),
      // Blocklist requests ride on a spam-model session (its hello needs a model): the spam check's, else one of
      // one email's worth of OTs.
      links: new LinkChecker({
        baseUrl: provider.url,
        account,
        store,
        connect: () => connector.connect(1),
        fetch: fetchUncached,
        logCheck: (logId, version, sha256) => verifier.checkLogged(logId, version, sha256),
        onProgress: (r, t) => slot.onProgress(r, t),
        reconnectWindowMs: RECONNECT_WINDOW_MS,
      }),
    };
    await dispose(current);
    current = slot;
  }
  const slot = current;
  slot.onProgress = (received, total) => emit({ event: 'download', received, total });
  return slot;
}

const connectorFor = async (provider: ProviderConfig, emit: (e: WorkerEvent) => void): Promise<Connector> =>
  (await slotFor(provider, emit)).connector;

async function prepare(provider: ProviderConfig, emit: (e: WorkerEvent) => void): Promise<PrepareResult> {
  let downloaded = false;
  const connector = await connectorFor(provider, (e) => {
    downloaded = true;
    emit(e);
  });
  const started = performance.now();
  const session = await connector.connect(1);
  session.close();
  const m = connector.model()!;
  return {
    modelId: m.header.modelId,
    modelVersion: m.header.modelVersion,
    packageBytes: m.header.bodyBytes,
    readyMs: Math.round(performance.now() - started),
    downloaded,
  };
}

async function classify(
  provider: ProviderConfig,
  items: { messageId: string; raw: string }[],
  emit: (e: WorkerEvent) => void,
  resumeKept = true,
): Promise<null> {
  const store = await privateStore();
  // Second line behind the background's own check: a request queued before
  // the user turned the check off still sends nothing.
  if (!(await store.settings()).spamCheck) throw new SpamCheckOff();
  const { connector, journal } = await slotFor(provider, emit);
  const account = accountOf(provider);
  // A batch queued by a background that was restarted meanwhile may repeat
  // messages an earlier batch already settled: answer those from IndexedDB
  // (asking again would turn a kept verdict into "already classified").
  const done = new Set<string>();
  /** Messages the provider knows as delivered and checked: their links are looked up next. */
  const checked = new Set<string>();
  for (const i of items) {
    const v = await store.verdict(account, i.messageId);
    if (!v) continue;
    done.add(i.messageId);
    if (v.kind !== 'unknown_message' && v.kind !== 'failed') checked.add(i.messageId);
    emit({
      event: 'outcome',
      outcome:
        v.kind === 'verdict'
          ? { kind: 'verdict', messageId: i.messageId, spam: v.spam }
          : v.kind === 'failed'
            ? { kind: 'failed', messageId: i.messageId, detail: v.detail, final: true }
            : { kind: v.kind, messageId: i.messageId, detail: 'recorded before' },
    });
  }
  /** Messages found not spam: their topics are shared next (unless a blocklist hit makes them spam). */
  const verdicts = new Set<string>();
  /** The spam check's last session: the link check goes on over it. */
  let open: SpamSession | undefined;
  await runClassification(
    items.map((i) => ({ id: i.messageId, raw: async () => i.raw })),
    {
      done,
      journal,
      connect: async (n) => (open = await connector.connect(n)),
      keepOpen: true,
      reconnectWindowMs: RECONNECT_WINDOW_MS,
      onReconnect: (_, e) => {
        if (e instanceof ProtocolError && e.code === 'rate_limited') emit({ event: 'slowed' });
      },
      onOutcome: async (o) => {
        const outcome = toItemOutcome(o);
        if (outcome.kind === 'verdict' && !outcome.spam) verdicts.add(outcome.messageId);
        if (outcome.kind === 'verdict' || outcome.kind === 'already_classified') checked.add(outcome.messageId);
        if (outcome.kind === 'failed') {
          // Counted, so a message that keeps failing is given up on (and then never holds up a batch).
          outcome.final = (await store.recordFailure(account, outcome.messageId, outcome.detail)).final;
        } else {
          const at = Date.now();
          await store.putVerdict(
            account,
            outcome.messageId,
            outcome.kind === 'verdict' ? { kind: 'verdict', spam: outcome.spam, at } : { kind: outcome.kind, at },
          );
        }
        emit({ event: 'outcome', outcome });
      },
    },
  );
  try {
    if ((await store.settings()).linkCheck && checked.size > 0)
      await (
        await slotFor(provider, emit)
      ).links.check(
        items.filter((i) => checked.has(i.messageId)),
        (blocklist: BlocklistOutcome) => {
          if (blocklist.hits.length > 0) verdicts.delete(blocklist.messageId);
          emit({ event: 'blocklist', blocklist });
        },
        open,
      );
  } finally {
    open?.close(); // closing twice is harmless: the link check closes what it used
  }
  // With those just checked, the topic requests a stopped run left: their messages have a stored verdict
  // and are not asked about again, and their kept answers need no message.
  const topicsOn = (await store.settings()).topics;
  const resumed = topicsOn && resumeKept ? (await store.keptTopicIds(account)).filter((id) => !verdicts.has(id)) : [];
  if (topicsOn && verdicts.size + resumed.length > 0)
    await extractTopics(
      provider,
      [...items.filter((i) => verdicts.has(i.messageId)), ...resumed.map((messageId) => ({ messageId }))],
      emit,
    );
  return null;
}

/** A message resumed from its kept topic request, which the provider did not answer: it is not in this batch. */
const notAtHand = (): never => {
  throw new Error('the message is not at hand; its topic is not shared');
};

/**
 * Topic extraction for messages whose spam check just answered, and for
 * those whose topic request a stopped run kept (resumed from its record). Its failure
 * never fails the spam check: each message is told it was not shared.
 */
async function extractTopics(
  provider: ProviderConfig,
  items: { messageId: string; raw?: string }[],
  emit: (e: WorkerEvent) => void,
): Promise<void> {
  const told = new Set<string>();
  const tell = (messageId: string, kind: TopicOutcome['kind'], detail?: string) => {
    told.add(messageId);
    emit({ event: 'topic', topic: { messageId, kind, detail } });
  };
  try {
    const slot = await slotFor(provider, emit);
    const topics = await slot.topics;
    // One worker at a time: sessions of two workers would share one user key's 6 topic emails; the
    // loser's request is refused (key_rotated) after its ciphertexts left, and each opens its own
    // session (hello and key) per key, twice the hellos a backlog's pace can take (hellosPerMinute).
    await alone(`pmf-topics:${accountOf(provider)}`, () =>
      runClassification<TopicResult>(
        items.map((i) => ({ id: i.messageId, raw: async () => i.raw ?? notAtHand() })),
        {
          journal: slot.topicJournal,
          connect: (n) => topics.connect(n),
          reconnectWindowMs: RECONNECT_WINDOW_MS,
          // already_classified: the provider holds this message's topic, say from a
          // resent request whose topic_ack was lost (docs/protocol.md#exactly-once-verdicts).
          onOutcome: (o) =>
            o.kind === 'verdict'
              ? tell(o.messageId, 'shared')
              : tell(
                  o.messageId,
                  o.kind === 'replay_refused' || o.kind === 'already_classified' ? 'shared_before' : 'failed',
                  o.detail,
                ),
        },
      ),
    );
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    for (const i of items) if (!told.has(i.messageId)) tell(i.messageId, 'failed', detail);
  }
}

/** Opens a topic session to record the user's choice with the provider. */
async function topicSetting(provider: ProviderConfig, optOut: boolean, emit: (e: WorkerEvent) => void): Promise<null> {
  const session = await (await (await slotFor(provider, emit)).topics).connect(1);
  try {
    await session.setOptOut(optOut);
  } finally {
    session.close();
  }
  return null;
}

function toItemOutcome(o: RunOutcome): ItemOutcome {
  if (o.kind === 'verdict') return { kind: 'verdict', messageId: o.messageId, spam: o.spam };
  // replay_refused is topic extraction's; a spam run cannot produce it.
  return { kind: o.kind === 'replay_refused' ? 'failed' : o.kind, messageId: o.messageId, detail: o.detail };
}

class SpamCheckOff extends Error {
  constructor() {
    super('spam check turned off in the settings');
    this.name = 'SpamCheckOff';
  }
}

/** Names a failure for the user message; the detail goes behind a disclosure. */
export function toFailure(e: unknown): WorkerFailure {
  const detail = e instanceof Error ? e.message : String(e);
  const name = (e as { name?: string } | undefined)?.name;
  if (e instanceof SpamCheckOff) return { code: 'spam_off', detail };
  if (e instanceof PackageIntegrityError) return { code: 'package_tampered', detail };
  if (e instanceof PackageLogAlert)
    return { code: e.kind === 'not_witnessed' ? 'package_unwitnessed' : 'package_log', detail };
  if (e instanceof ProtocolError) {
    if (e.code === 'unauthenticated') return { code: 'bad_token', detail };
    // Past the day's cap (message-rate.ts) the provider also asks to wait: until the next day.
    if (e.code === 'rate_limited' || e.code === 'daily_limit') return { code: 'rate_limited', detail };
    return { code: 'protocol', detail: `${e.code}: ${detail}` };
  }
  if (name === 'QuotaExceededError') return { code: 'storage_full', detail };
  // fetch() rejects with a TypeError when nothing answers.
  if (e instanceof ConnectionClosed || e instanceof TypeError || /HTTP 5\d\d/.test(detail))
    return { code: 'provider_unreachable', detail };
  return { code: 'protocol', detail };
}

/**
 * Runs `work`, telling once that it waits when a frame is held back by the
 * client's pacing (the provider's rate limit, client/core/pacer.ts): the
 * user sees a wait, not a check that hangs.
 */
async function whilePaced<T>(provider: ProviderConfig, emit: (e: WorkerEvent) => void, work: () => Promise<T>) {
  let told = false;
  const unwatch = onPacedWait(provider.token, () => {
    if (!told) emit({ event: 'slowed' });
    told = true;
  });
  try {
    return await work();
  } finally {
    unwatch();
  }
}

async function run(req: WorkerRequest, emit: (e: WorkerEvent) => void): Promise<unknown> {
  switch (req.kind) {
    case 'prepare':
      return prepare(req.provider, emit);
    case 'classify':
      sharePace(req.paceShare ?? 1);
      return whilePaced(req.provider, emit, () => classify(req.provider, req.items, emit, req.resumeKept));
    case 'topic-setting':
      return topicSetting(req.provider, req.optOut, emit);
    case 'reset':
      await dispose(current);
      current = undefined;
      return null;
  }
}

/** Serves envelopes from the host; requests run one at a time (one session, one model). */
export function serveWorker(post: (msg: WorkerEnvelope) => void): (msg: WorkerEnvelope) => void {
  let queue: Promise<unknown> = Promise.resolve();
  return (msg) => {
    if (!('request' in msg)) return;
    const { id, request } = msg;
    queue = queue.then(() =>
      run(request, (event) => post({ id, event })).then(
        (done) => post({ id, done }),
        (e: unknown) => post({ id, failed: toFailure(e) }),
      ),
    );
  };
}
