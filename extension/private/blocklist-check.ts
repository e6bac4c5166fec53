// The link check in the WASM worker: after a message's private spam verdict,
// its links and attachments are looked up privately in the provider's
// blocklist (docs/blocklist.md) with client/core's code (BlocklistClassifier
// over a session of the spam connector, the CLI's runner). The list package
// is downloaded into the extension's IndexedDB with the model package's code
// (client/core/download.ts: resumable, pinned by the listing and the signed
// package log), from the day's delta when the version before is stored. Every
// outcome is recorded before it is reported, so a restart never asks twice
// (the provider would answer already_classified). A failure never touches the
// spam verdict: the message simply shows no blocklist line.
import {
  blocklistClassifiers,
  ensureBlocklist,
  offeredBlocklists,
  type BlocklistEvaluator,
  type BlocklistResult,
  type LoadedBlocklist,
} from '../../client/core/blocklist.js';
import type { PackageStorage } from '../../client/core/download.js';
import { runClassification } from '../../client/core/runner.js';
import { openList } from '../../protocol/blocklist.js';
import { ProtocolError } from '../../protocol/errors.js';
import type { PrivateStore } from './store.js';
import type { BlocklistOutcome } from './worker-protocol.js';

export interface LinkCheckOptions {
  baseUrl: string;
  account: string;
  store: Pick<PrivateStore, 'blocklistOutcome' | 'putBlocklistOutcome' | 'storedPackage' | 'blindKeys'> & {
    packages: PackageStorage;
  };
  /** A provider session that evaluates blocklist requests (a spam-model session: hello needs a model). */
  connect(): Promise<BlocklistEvaluator>;
  fetch?: typeof fetch;
  /** Throws unless the signed package log lists the package (client/core/package-log.ts checkLogged). */
  logCheck?: (logId: string, version: number, sha256: string) => Promise<unknown>;
  onProgress?: (received: number, total: number) => void;
  reconnectWindowMs?: number;
}

/** One account's list, kept loaded between batches; replaced when the provider answers model_outdated. */
export class LinkChecker {
  private loaded: LoadedBlocklist | undefined;

  constructor(private readonly o: LinkCheckOptions) {}

  /** The list in use (after a check), for status lines. */
  current(): LoadedBlocklist | undefined {
    return this.loaded;
  }

  /**
   * The provider's list: the one in memory, else its current version (the
   * first list it offers: one lookup per message, so one list), opened from
   * IndexedDB or downloaded, from a delta when the version before is stored.
   * Undefined when the provider publishes none.
   */
  async list(refresh = false): Promise<LoadedBlocklist | undefined> {
    if (this.loaded && !refresh) return this.loaded;
    const [listing] = await offeredBlocklists(this.o.baseUrl, this.o.fetch);
    if (!listing) return (this.loaded = undefined);
    let previous = this.loaded?.list.header.listId === listing.id ? this.loaded : undefined;
    if (!previous) {
      const stored = await this.o.store.storedPackage(`blocklist-${listing.id}`);
      try {
        previous = stored && { list: openList(stored.data), sha256: '' };
      } catch {
        previous = undefined; // damaged: the full package replaces it
      }
    }
    this.loaded = await ensureBlocklist({
      baseUrl: this.o.baseUrl,
      listId: listing.id,
      storage: this.o.store.packages,
      fetch: this.o.fetch,
      onProgress: this.o.onProgress,
      logCheck: this.o.logCheck,
      previous,
    });
    return this.loaded;
  }

  /**
   * Looks each message up once: a recorded outcome is told from IndexedDB;
   * the others go to the provider, one request per message, over `open`
   * (the spam check's session, which this closes) before any new session.
   * Every message gets one outcome; no error escapes (the spam verdict
   * stands either way).
   */
  async check(
    items: { messageId: string; raw: string }[],
    tell: (o: BlocklistOutcome) => void,
    open?: BlocklistEvaluator,
  ): Promise<void> {
    let handed = open;
    const connect = async (): Promise<BlocklistEvaluator> => {
      const s = handed ?? (await this.o.connect());
      handed = undefined;
      return s;
    };
    const told = new Set<string>();
    const say = (o: BlocklistOutcome) => {
      told.add(o.messageId);
      tell(o);
    };
    const todo: typeof items = [];
    for (const i of items) {
      const s = await this.o.store.blocklistOutcome(this.o.account, i.messageId);
      if (!s) todo.push(i);
      else say({ messageId: i.messageId, hits: s.kind === 'looked-up' ? s.hits : [], detail: 'recorded before' });
    }
    try {
      if (todo.length === 0) return;
      let list = await this.list();
      if (!list) throw new Error('the provider publishes no blocklist');
      for (let attempt = 0; ; attempt++) {
        const { header } = list.list;
        const classifiers = blocklistClassifiers(connect, list.list, this.o.store.blindKeys(this.o.account));
        try {
          await runClassification<BlocklistResult>(
            todo.map((i) => ({ id: i.messageId, raw: async () => i.raw })),
            {
              done: told,
              connect: classifiers.connect,
              journal: classifiers.journal,
              reconnectWindowMs: this.o.reconnectWindowMs,
              onOutcome: async (o) => {
                const at = Date.now();
                if (o.kind === 'verdict') {
                  await this.o.store.putBlocklistOutcome(this.o.account, o.messageId, {
                    kind: 'looked-up',
                    listId: header.listId,
                    version: header.version,
                    hits: o.hits,
                    at,
                  });
                  say({ messageId: o.messageId, hits: o.hits });
                  return;
                }
                // Looked up before (another device, or an install whose kept blinds are gone) or not delivered: never ask again.
                if (o.kind === 'already_classified' || o.kind === 'unknown_message')
                  await this.o.store.putBlocklistOutcome(this.o.account, o.messageId, { kind: o.kind, at });
                say({ messageId: o.messageId, hits: [], detail: `${o.kind}: ${o.detail}` });
              },
            },
          );
          return;
        } catch (e) {
          // A new version was published meanwhile: fetch it (a delta when possible) and go on once.
          if (!(e instanceof ProtocolError && e.code === 'model_outdated') || attempt > 0) throw e;
          const next = await this.list(true);
          if (!next) throw e;
          list = next;
        }
      }
    } catch (e) {
      const detail = e instanceof Error ? e.message : String(e);
      for (const i of items) if (!told.has(i.messageId)) say({ messageId: i.messageId, hits: [], detail });
    } finally {
      handed?.close(); // handed but not used: nothing to look up, or no list
    }
  }
}
