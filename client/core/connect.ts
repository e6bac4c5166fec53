// Connecting to a provider: model package (downloaded once, re-fetched when
// the provider says it is outdated) + session. Shared by the CLI and the demo;
// the extension wires the same pieces with IndexedDB storage and its socket.
import { ProtocolError } from '../../protocol/errors.js';
import type { ClientKeySwitchKey, He } from '../../wasm/ts/he.js';
import { CoreError, Status } from '../../wasm/ts/status.js';
import { ensurePackage, type DownloadOptions, type PackageStorage, type VerifiedPackage } from './download.js';
import { loadModel, type LoadedModel, type SessionOptions, type SocketFactory } from './provider-session.js';
import { SpamSession } from './session.js';

const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/** ws(s)://host/session for an http(s) base; plain http only to a loopback host (tokens travel in the clear otherwise). */
export function sessionUrl(base: string): string {
  const u = new URL(base);
  if (u.protocol === 'http:' && !LOOPBACK.test(u.hostname)) {
    throw new Error(`refusing plain http:// to ${u.hostname}: use https:// (plain transport is for loopback only)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new Error(`provider URL must be http(s)://, got ${u.protocol}`);
  return `${u.protocol === 'https:' ? 'wss' : 'ws'}://${u.host}/session`;
}

export interface ConnectorOptions<M extends LoadedModel = LoadedModel, S = SpamSession> {
  server: string;
  token: string;
  modelId?: string;
  he: He;
  storage: PackageStorage;
  socket: SocketFactory;
  onDownloadProgress?: (received: number, total: number) => void;
  fetch?: DownloadOptions['fetch'];
  /** Refuses a package the provider's package log does not vouch for (client/core/package-log.ts). */
  logCheck?: DownloadOptions['logCheck'];
  onInvalidOutput?: (messageId: string) => void;
  onMessageWarning?: SessionOptions['onMessageWarning'];
  /** Loads a verified package (default: a spam model); topics also fetch the candidate model here. */
  load?: (pkg: VerifiedPackage) => Promise<M>;
  /** Opens the session (default: SpamSession). */
  open?: (opts: SessionOptions & { model: M }) => Promise<S>;
  /** Spam requests kept on the device until their outcome is stored (kept-requests.ts); pass runJournal of the same to the run. */
  kept?: SessionOptions['kept'];
  /** The device's flooding budget, charged for every ciphertext before it leaves (flood-ledger.ts). */
  flood?: SessionOptions['flood'];
  /** Persistent per-user key-switching keys by package key ("<model>-v<version>"), e.g. the extension's IndexedDB. */
  userKeys?: {
    get(packageKey: string): Promise<{ epoch: number; ksk: Uint8Array } | undefined>;
    put(packageKey: string, key: { epoch: number; ksk: Uint8Array }): Promise<void>;
  };
}

const packageKey = (m: LoadedModel): string => `${m.header.modelId}-v${m.header.modelVersion}`;

export interface Connector<M extends LoadedModel = LoadedModel, S = SpamSession> {
  connect(remaining: number): Promise<S>;
  /** The model currently in use (after the first connect). */
  model(): M | undefined;
}

/**
 * A stored user key, or none when an older build stored it in a layout this
 * one no longer reads (the key-switching key's layouts 1 and 2): the session then
 * asks for the current epoch's key again. Any other defect is an error.
 */
function storedUserKey(
  he: He,
  saved: { epoch: number; ksk: Uint8Array },
): { epoch: number; ksk: ClientKeySwitchKey } | undefined {
  try {
    return { epoch: saved.epoch, ksk: he.loadKeySwitchKey(saved.ksk) };
  } catch (e) {
    if (e instanceof CoreError && e.code === Status.BadVersion) return undefined;
    throw e;
  }
}

export function createConnector<M extends LoadedModel = LoadedModel, S = SpamSession>(
  opts: ConnectorOptions<M, S>,
): Connector<M, S> {
  const url = sessionUrl(opts.server);
  const load = opts.load ?? (async (pkg) => loadModel(opts.he, pkg) as M);
  const openSession = opts.open ?? ((o) => SpamSession.open(o) as Promise<S>);
  let loaded: M | undefined;
  const refresh = async (): Promise<M> => {
    const pkg = await ensurePackage({
      baseUrl: opts.server,
      modelId: opts.modelId ?? 'spam',
      storage: opts.storage,
      onProgress: opts.onDownloadProgress,
      fetch: opts.fetch,
      logCheck: opts.logCheck,
    });
    if (loaded?.sha256 !== pkg.sha256) {
      loaded?.model.dispose();
      loaded?.userKey?.ksk.dispose();
      loaded = await load(pkg);
      const saved = await opts.userKeys?.get(packageKey(loaded));
      // A stored key is validated like a received one; the welcome then carries no key.
      if (saved) loaded.userKey = storedUserKey(opts.he, saved);
    }
    return loaded;
  };
  return {
    model: () => loaded,
    async connect(remaining: number): Promise<S> {
      const open = async (): Promise<S> =>
        openSession({
          url,
          token: opts.token,
          model: loaded ?? (await refresh()),
          he: opts.he,
          socket: opts.socket,
          expectedEmails: remaining,
          onInvalidOutput: opts.onInvalidOutput,
          onMessageWarning: opts.onMessageWarning,
          kept: opts.kept,
          flood: opts.flood,
          onUserKey: opts.userKeys && ((epoch, ksk) => opts.userKeys!.put(packageKey(loaded!), { epoch, ksk })),
        });
      try {
        return await open();
      } catch (e) {
        if (!(e instanceof ProtocolError && e.code === 'model_outdated')) throw e;
        await refresh(); // the provider rotated its model: fetch the new version and retry once
        return open();
      }
    },
  };
}
