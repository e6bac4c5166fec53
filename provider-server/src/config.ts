// Server configuration from a JSON file overlaid by environment variables.
// Plain ws:// and http:// are allowed only on a loopback address: anywhere
// else the bearer tokens and the protocol would travel unencrypted.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { LIMIT_DEFAULTS, LIMIT_RANGES, type ServerLimits } from './limits.js';
import { MAX_B_PRIME } from '../../protocol/limits.js';
import { PACKAGE_LOG_DEFAULTS, parsePackageLogConfig, type PackageLogConfig } from './log-witnesses.js';

export interface ModelSource {
  /** Model id used in hello frames and package URLs. */
  id: string;
  /** Plaintext (provider-secret) model file written by models/. */
  file: string;
  /**
   * Topic models: the public candidate model (role "public") clients use to
   * pick the B' candidates. Defaults to <file's name>-candidates.pmfm beside
   * the model file (the bundled models/default/topics-candidates.pmfm).
   */
  candidates?: string;
  /** Topic models: candidates per email, B' (default 20, at most min(B, 64)). */
  bPrime?: number;
}

export interface ServerConfig {
  host: string;
  port: number;
  /** PEM files; without them the server runs plain, loopback only. */
  tls?: { certFile: string; keyFile: string };
  dataDir: string;
  /**
   * Where users, claims and rate limits live: absent for the embedded SQLite
   * file `<dataDir>/store.db`, or a `postgres://` URL for a PostgreSQL store
   * that several instances share (README.md#store).
   */
  store?: string;
  limits: ServerLimits;
  /**
   * Browser origins allowed to open sessions (exact origins, or `scheme://*`
   * for any origin of a scheme). Native clients send no Origin and are not
   * affected; a web page elsewhere cannot make its visitors' browsers open
   * sessions here.
   */
  allowedOrigins: string[];
  /**
   * Addresses of load balancers in front of this instance: for connections
   * from them, the client address (for per-address limits) is the last one
   * they appended to X-Forwarded-For. Empty: the socket's peer address.
   */
  trustedProxies: string[];
  /**
   * Who may reach the internal endpoints (/metrics, /admin/*): addresses or
   * CIDR ranges, matched against the client address (behind a trusted
   * proxy, the one it forwarded). Loopback only by default: Prometheus and
   * operators on the host, never the public through the proxy.
   */
  internalAllowlist: string[];
  /**
   * Hex SHA-256 of each admin bearer token (`provider-server admin-token`
   * prints one); the /admin endpoints exist only when this is not empty.
   */
  adminTokenSha256: string[];
  /**
   * Hex SHA-256 of each webmail secret (`provider-server webmail-secret`
   * prints one): a webmail's server (the Roundcube plugin) holding one may ask
   * POST /webmail/token for its logged-in user's token; the endpoint exists
   * only when this is not empty.
   */
  webmailSecretSha256: string[];
  /** Crypto worker threads. */
  workers: number;
  models: ModelSource[];
  /** Sign-in with the mail password and the discovery document, as written (sign-in/config.ts checks them). */
  signIn?: unknown;
  /** The LMTP stage's settings as written; `provider-server lmtp` checks them (lmtp/config.ts). */
  lmtp?: unknown;
  /** Serving the bundled demo models on purpose (`npm run demo`): no warning about them (demo-models.ts). */
  demo?: boolean;
  /** The package log's origin and the witnesses that cosign its checkpoints (log-witnesses.ts, README.md). */
  packageLog: PackageLogConfig;
  /** The remote search index's per-account limits as written; checked at start (remote-index/limits.ts). */
  remoteIndex?: unknown;
}

export const DEFAULTS: ServerConfig = {
  host: '127.0.0.1',
  port: 8787,
  dataDir: '.data/provider',
  limits: LIMIT_DEFAULTS,
  // The extension's pages and worker; Firefox gives each install its own host.
  allowedOrigins: ['chrome-extension://*', 'moz-extension://*'],
  trustedProxies: [],
  internalAllowlist: ['127.0.0.1', '::1'],
  adminTokenSha256: [],
  webmailSecretSha256: [],
  workers: Math.max(1, Math.min(4, os.availableParallelism() - 1)),
  models: [],
  packageLog: PACKAGE_LOG_DEFAULTS,
};

/** Settings given in code (tests, embedding): any subset, limits included. */
export type ConfigOverrides = Partial<Omit<ServerConfig, 'limits'>> & { limits?: Partial<ServerConfig['limits']> };

export function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (net.isIPv4(host)) return host.startsWith('127.');
  if (net.isIPv6(host)) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

function intFrom(value: unknown, name: string, min: number, max: number): number {
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    throw new Error(`config: ${name} must be an integer in ${min}..${max}`);
  }
  return n;
}

function validOrigins(list: unknown): string[] {
  const ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/(\*|[^/*\s]+)$/;
  if (!Array.isArray(list) || !list.every((o) => typeof o === 'string' && ORIGIN.test(o))) {
    throw new Error('config: allowedOrigins must be a list of origins like https://mail.example or moz-extension://*');
  }
  return list;
}

/** Whether a browser's Origin header is allowed by the configured list. */
export function originAllowed(origin: string, allowed: readonly string[]): boolean {
  return allowed.some((a) => a === origin || (a.endsWith('://*') && origin.startsWith(a.slice(0, -1))));
}

/**
 * The address per-address limits apply to: the peer, or for a trusted proxy
 * the address it appended last to X-Forwarded-For (earlier entries are the
 * client's own claims and could be forged).
 */
export function clientAddress(
  peer: string,
  forwardedFor: string | string[] | undefined,
  trustedProxies: readonly string[],
): string {
  if (!trustedProxies.includes(peer) || forwardedFor === undefined) return peer;
  const last = [forwardedFor].flat().join(',').split(',').at(-1)?.trim() ?? '';
  return net.isIP(last) ? last : peer;
}

/** An IPv4 address as a dual-stack socket reports it (::ffff:a.b.c.d), as itself. */
function unmapped(address: string): string {
  return address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address;
}

/** The addresses and CIDR ranges of `list` (`internalAllowlist`), or an error naming the first bad entry. */
export function addressList(list: readonly string[]): net.BlockList {
  const blocks = new net.BlockList();
  for (const entry of list) {
    const [address, bits, ...rest] = String(entry).split('/');
    const type = net.isIPv4(address) ? 'ipv4' : net.isIPv6(address) ? 'ipv6' : undefined;
    const prefix = bits === undefined ? undefined : Number(bits);
    const max = type === 'ipv4' ? 32 : 128;
    if (
      !type ||
      rest.length > 0 ||
      (prefix !== undefined && !(Number.isInteger(prefix) && prefix >= 0 && prefix <= max))
    )
      throw new Error(`config: internalAllowlist entry "${entry}" must be an IP address or a CIDR range`);
    if (prefix === undefined) blocks.addAddress(address, type);
    else blocks.addSubnet(address, prefix, type);
  }
  return blocks;
}

/** Whether `address` is in a list made by addressList. */
export function listed(list: net.BlockList, address: string): boolean {
  const a = unmapped(address);
  const type = net.isIPv4(a) ? 'ipv4' : net.isIPv6(a) ? 'ipv6' : undefined;
  return type !== undefined && list.check(a, type);
}

/**
 * Whether the client reached us over TLS: our own, or a trusted proxy's that
 * said so (X-Forwarded-Proto: https, which deploy/haproxy.cfg sets).
 */
export function overTls(
  req: {
    socket: { remoteAddress?: string; encrypted?: boolean };
    headers: Record<string, string | string[] | undefined>;
  },
  trustedProxies: readonly string[],
): boolean {
  if (req.socket.encrypted) return true;
  const proto = req.headers['x-forwarded-proto'];
  return trustedProxies.includes(req.socket.remoteAddress ?? '') && proto === 'https';
}

/** A configured list of hex SHA-256 digests of secrets (the secrets themselves are never configured). */
function digests(list: unknown, name: string, command: string): void {
  if (!Array.isArray(list) || !list.every((h) => typeof h === 'string' && /^[0-9a-f]{64}$/.test(h)))
    throw new Error(`config: ${name} must be a list of hex SHA-256 digests (provider-server ${command})`);
}

/** PMF_MODELS=id=path[,id=path...] */
function parseModelList(s: string): ModelSource[] {
  return s
    .split(',')
    .filter(Boolean)
    .map((entry) => {
      const eq = entry.indexOf('=');
      if (eq <= 0) throw new Error(`config: PMF_MODELS entry "${entry}" must be id=path`);
      return { id: entry.slice(0, eq), file: entry.slice(eq + 1) };
    });
}

/**
 * Loads and validates the configuration: defaults, then the JSON file (if
 * given), then environment variables (PMF_HOST, PMF_PORT, PMF_TLS_CERT,
 * PMF_TLS_KEY, PMF_DATA_DIR, PMF_MAX_FRAME_BYTES, PMF_RATE_PER_MINUTE,
 * PMF_MAX_SESSIONS, PMF_WORKERS, PMF_MODELS, PMF_ALLOWED_ORIGINS, PMF_TRUSTED_PROXIES,
 * PMF_INTERNAL_ALLOWLIST, PMF_ADMIN_TOKEN_SHA256). Relative paths in the file are
 * resolved against the file's directory.
 */
export function loadConfig(
  opts: { file?: string; env?: NodeJS.ProcessEnv; overrides?: ConfigOverrides } = {},
): ServerConfig {
  const env = opts.env ?? process.env;
  let fromFile: Partial<ServerConfig> = {};
  let base = process.cwd();
  if (opts.file) {
    try {
      fromFile = JSON.parse(fs.readFileSync(opts.file, 'utf8')) as Partial<ServerConfig>;
    } catch (e) {
      throw new Error(`config: cannot read ${opts.file}: ${(e as Error).message}`);
    }
    base = path.dirname(path.resolve(opts.file));
  }
  const merged: ServerConfig = {
    ...DEFAULTS,
    ...fromFile,
    ...opts.overrides,
    limits: { ...DEFAULTS.limits, ...fromFile.limits, ...opts.overrides?.limits },
  };
  if (env.PMF_HOST) merged.host = env.PMF_HOST;
  if (env.PMF_PORT) merged.port = intFrom(env.PMF_PORT, 'PMF_PORT', 0, 65535);
  if (env.PMF_DATA_DIR) merged.dataDir = env.PMF_DATA_DIR;
  if (env.PMF_STORE) merged.store = env.PMF_STORE;
  if (env.PMF_TLS_CERT || env.PMF_TLS_KEY) {
    merged.tls = { certFile: env.PMF_TLS_CERT ?? '', keyFile: env.PMF_TLS_KEY ?? '' };
  }
  if (env.PMF_MAX_FRAME_BYTES) merged.limits.maxFrameBytes = Number(env.PMF_MAX_FRAME_BYTES);
  if (env.PMF_RATE_PER_MINUTE) merged.limits.requestsPerMinute = Number(env.PMF_RATE_PER_MINUTE);
  if (env.PMF_MAX_SESSIONS) merged.limits.maxSessions = Number(env.PMF_MAX_SESSIONS);
  if (env.PMF_WORKERS) merged.workers = Number(env.PMF_WORKERS);
  if (env.PMF_DEMO) merged.demo = env.PMF_DEMO === '1';
  if (env.PMF_MODELS) merged.models = parseModelList(env.PMF_MODELS);
  if (env.PMF_ALLOWED_ORIGINS) merged.allowedOrigins = env.PMF_ALLOWED_ORIGINS.split(',').filter(Boolean);
  if (env.PMF_TRUSTED_PROXIES) merged.trustedProxies = env.PMF_TRUSTED_PROXIES.split(',').filter(Boolean);
  if (env.PMF_INTERNAL_ALLOWLIST) merged.internalAllowlist = env.PMF_INTERNAL_ALLOWLIST.split(',').filter(Boolean);
  if (env.PMF_ADMIN_TOKEN_SHA256) merged.adminTokenSha256 = env.PMF_ADMIN_TOKEN_SHA256.split(',').filter(Boolean);
  if (env.PMF_WEBMAIL_SECRET_SHA256)
    merged.webmailSecretSha256 = env.PMF_WEBMAIL_SECRET_SHA256.split(',').filter(Boolean);

  merged.port = intFrom(merged.port, 'port', 0, 65535);
  merged.workers = intFrom(merged.workers, 'workers', 1, 64);
  for (const [k, [min, max]] of Object.entries(LIMIT_RANGES) as [keyof ServerLimits, readonly [number, number]][])
    merged.limits[k] = intFrom(merged.limits[k], `limits.${k}`, min, max);
  if (merged.limits.maxSendBufferBytes < 2 * merged.limits.maxFrameBytes) {
    throw new Error('config: limits.maxSendBufferBytes must hold at least two frames of limits.maxFrameBytes');
  }
  merged.allowedOrigins = validOrigins(merged.allowedOrigins);
  if (!Array.isArray(merged.trustedProxies) || !merged.trustedProxies.every((a) => net.isIP(a) !== 0)) {
    throw new Error('config: trustedProxies must be a list of IP addresses');
  }
  if (!Array.isArray(merged.internalAllowlist))
    throw new Error('config: internalAllowlist must be a list of IP addresses or CIDR ranges');
  addressList(merged.internalAllowlist);
  digests(merged.adminTokenSha256, 'adminTokenSha256', 'admin-token');
  digests(merged.webmailSecretSha256, 'webmailSecretSha256', 'webmail-secret');
  if (typeof merged.host !== 'string' || merged.host === '') throw new Error('config: host must be a non-empty string');
  if (merged.tls) {
    if (!merged.tls.certFile || !merged.tls.keyFile)
      throw new Error('config: TLS needs both a certificate and a key file');
    merged.tls = { certFile: path.resolve(base, merged.tls.certFile), keyFile: path.resolve(base, merged.tls.keyFile) };
  } else if (!isLoopback(merged.host)) {
    throw new Error(
      `config: refusing plain ws:// on non-loopback address ${merged.host}; configure TLS (PMF_TLS_CERT/PMF_TLS_KEY) or listen on 127.0.0.1`,
    );
  }
  merged.dataDir = path.resolve(base, merged.dataDir);
  if (merged.store !== undefined && (typeof merged.store !== 'string' || !/^postgres(ql)?:\/\//.test(merged.store)))
    throw new Error('config: store must be a postgres:// URL (leave it out for the embedded SQLite store)');
  if (merged.demo !== undefined && typeof merged.demo !== 'boolean')
    throw new Error('config: demo must be true or false');
  merged.packageLog = parsePackageLogConfig(merged.packageLog);
  if (!Array.isArray(merged.models)) throw new Error('config: models must be a list of {id, file}');
  const ids = new Set<string>();
  merged.models = merged.models.map((m) => {
    if (!m || typeof m.id !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(m.id) || typeof m.file !== 'string') {
      throw new Error('config: each model needs an id matching [A-Za-z0-9._-]{1,64} and a file');
    }
    if (ids.has(m.id)) throw new Error(`config: model id ${m.id} is listed twice`);
    ids.add(m.id);
    if (m.candidates !== undefined && typeof m.candidates !== 'string')
      throw new Error(`config: model ${m.id}: candidates must be a file name`);
    if (m.bPrime !== undefined) intFrom(m.bPrime, `models.${m.id}.bPrime`, 1, MAX_B_PRIME);
    return {
      id: m.id,
      file: path.resolve(base, m.file),
      ...(m.candidates === undefined ? {} : { candidates: path.resolve(base, m.candidates) }),
      ...(m.bPrime === undefined ? {} : { bPrime: m.bPrime }),
    };
  });
  return merged;
}
