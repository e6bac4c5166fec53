// Key and model lifecycle. For every configured plaintext model:
//   - if the file changed since the last version (or there is none): generate
//     a fresh secret key (file mode 0600, never logged), a fresh provider seed,
//     encrypt the model with the lattice layer into a package (docs/crypto.md#model-encryption-and-packing)
//     with a progress bar, and record it as version v+1;
//   - keep older versions' packages downloadable, so a client on an old
//     version is told (model_outdated) to fetch the new one.
// A topic model version also pins its public candidate model (copied beside
// the package and named by hash in the package header), and B'.
// Layout: <dataDir>/models/<id>/{versions.json, v<k>.pmf, v<k>.key, v<k>.candidates.pmfm}.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  DEFAULT_B_PRIME,
  encodePackagePrefix,
  PACKAGE_FORMAT,
  parsePackagePrefix,
  type PackageHeader,
  type TopicsSection,
} from '../../protocol/package.js';
import type { LogEntry } from '../../protocol/package-log.js';
import { loadPlainModel, trainedOnPublicCorpora, type PlainModel } from '../../models/plain/index.js';
import { heLayout, KSK_LAYOUT, loadHe, paramsFromHeader, type He, type HeParams } from '../../wasm/ts/he.js';
import type { ModelSource } from './config.js';
import { octalMode, readRegularFile } from './read-file.js';
import { readSecretFile, writeSecretFile } from './secret-file.js';
import type { ServedModel } from './crypto.js';

interface VersionRecord {
  version: number;
  /** SHA-256 of the plaintext model file this version was built from. */
  sourceSha256: string;
  packageSha256: string;
  packageBytes: number;
  params: HeParams;
  providerSeed: string;
  createdAt: string;
  topics?: TopicsSection;
  /** The KSK layout (KSK_LAYOUT) its user keys are handed out in; absent in versions built before layout 3. */
  kskLayout?: number;
}

/** The served models, by id: what the server asks of a catalog. */
export interface ModelCatalog {
  current(id: string): ServedModel | undefined;
  all(): ServedModel[];
}

export type Progress = (done: number, total: number, label: string) => void;

/**
 * Reads a plaintext model file, warning (a process warning, code
 * PMF_MODEL_FILE_MODE) when group or others can read a private one: a
 * provider's own model is its secret. A public model (a topic candidate
 * model, or one trained on public corpora only, as the bundled demo models
 * are) may be readable by anyone, so it gets no warning; nothing is refused
 * (provider-server/README.md).
 */
export function readModelFile(file: string): Uint8Array {
  let mode: string | undefined;
  const bytes = readRegularFile(file, 'model file', { noFollow: false }, (st) => {
    if ((st.mode & 0o044) !== 0) mode = octalMode(st);
  });
  if (mode !== undefined && !isPublicModel(bytes)) {
    process.emitWarning(
      `model file ${file} has mode ${mode}: group or others can read the plaintext model (chmod 600 it unless the model is public)`,
      { code: 'PMF_MODEL_FILE_MODE' },
    );
  }
  return bytes;
}

/** Whether a model file's header says it is public; a file that does not parse is treated as private. */
function isPublicModel(bytes: Uint8Array): boolean {
  let model: PlainModel;
  try {
    model = loadPlainModel(bytes);
  } catch {
    return false;
  }
  model.weights.fill(0);
  model.floatWeights?.fill(0);
  return model.header.role === 'public' || trainedOnPublicCorpora(model.header);
}

/** A terminal progress bar on stderr; when not a TTY, a line every quarter (to `lines` if given). */
export function progressBar(
  stream: NodeJS.WriteStream = process.stderr,
  lines: (text: string) => void = (text) => stream.write(`${text}\n`),
): Progress {
  let lastPct = -1;
  return (done, total, label) => {
    const pct = total === 0 ? 100 : Math.floor((100 * done) / total);
    if (pct === lastPct) return;
    lastPct = pct;
    if (stream.isTTY) {
      const width = 30;
      const fill = Math.round((width * pct) / 100);
      stream.write(`\r${label} [${'#'.repeat(fill)}${'.'.repeat(width - fill)}] ${pct}%${done === total ? '\n' : ''}`);
    } else if (pct % 25 === 0) {
      lines(`${label}: ${pct}%`);
    }
  };
}

export class FileModelCatalog implements ModelCatalog {
  private readonly served = new Map<string, ServedModel[]>();
  private readonly entries: LogEntry[] = [];

  current(id: string): ServedModel | undefined {
    return this.served.get(id)?.at(-1);
  }

  all(): ServedModel[] {
    return [...this.served.values()].flat();
  }

  /** Every served version as a package-log entry, oldest first per model. */
  published(): LogEntry[] {
    return [...this.entries];
  }

  /** Builds missing versions and loads every version of every configured model. */
  static async prepare(
    dataDir: string,
    sources: ModelSource[],
    progress: Progress = () => {},
  ): Promise<FileModelCatalog> {
    const catalog = new FileModelCatalog();
    const he = await loadHe();
    for (const src of sources) {
      const dir = path.join(dataDir, 'models', src.id);
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      const versions = readVersions(dir);
      const plain = readModelFile(src.file);
      try {
        const topics = topicSource(src, plain);
        const source = createHash('sha256').update(plain);
        // A new candidate model or B' is a new version too (spam hashes stay as they were).
        if (topics) source.update(topics.bytes).update(`\0bPrime=${topics.bPrime}`);
        const sourceSha256 = source.digest('hex');
        // A new KSK layout is a new version too: users of the old one already hold its
        // weaker KSKs, which tie that version's key to them (docs/crypto.md#deterministic-provider-randomness).
        const last = versions.at(-1);
        if (last?.sourceSha256 !== sourceSha256 || last?.kskLayout !== KSK_LAYOUT) {
          const version = (versions.at(-1)?.version ?? 0) + 1;
          versions.push(await buildVersion(dir, src.id, version, plain, sourceSha256, topics, progress));
          fs.writeFileSync(path.join(dir, 'versions.json'), JSON.stringify(versions, null, 2));
        }
      } finally {
        plain.fill(0);
      }
      for (const v of versions) {
        catalog.entries.push({
          modelId: src.id,
          version: v.version,
          packageSha256: v.packageSha256,
          createdAt: v.createdAt,
        });
      }
      catalog.served.set(
        src.id,
        versions.map((v) => {
          const packageFile = path.join(dir, `v${v.version}.pmf`);
          const keyFile = path.join(dir, `v${v.version}.key`);
          verifyFileHash(packageFile, v.packageSha256, 'package');
          verifyKey(he, keyFile);
          const candidatesFile = path.join(dir, `v${v.version}.candidates.pmfm`);
          if (v.topics) verifyFileHash(candidatesFile, v.topics.candidatesSha256, 'candidate model');
          return {
            ...(v.topics ? { topics: { ...v.topics, candidatesFile } } : {}),
            id: src.id,
            version: v.version,
            packageFile,
            packageBytes: v.packageBytes,
            packageSha256: v.packageSha256,
            params: v.params,
            providerSeed: v.providerSeed,
            keyFile,
          };
        }),
      );
    }
    return catalog;
  }
}

/** The labels of a served model version (its package header), by model id and version; [] if unknown. */
export function topicNames(dataDir: string): (modelId: string, version: number) => string[] {
  const cache = new Map<string, string[]>();
  return (modelId, version) => {
    const key = `${modelId}\0${version}`;
    if (!cache.has(key)) {
      let labels: string[] = [];
      try {
        const file = path.join(dataDir, 'models', modelId, `v${version}.pmf`);
        const fd = fs.openSync(file, 'r');
        try {
          const head = Buffer.alloc((1 << 20) + 12); // magic, length, the largest header
          labels = parsePackagePrefix(head.subarray(0, fs.readSync(fd, head)))?.header.labels ?? [];
        } finally {
          fs.closeSync(fd);
        }
      } catch {
        labels = [];
      }
      cache.set(key, labels);
    }
    return cache.get(key)!;
  };
}

/** A topic model's candidate model, B' and what both must agree on. */
function topicSource(src: ModelSource, plainBytes: Uint8Array): { bytes: Uint8Array; bPrime: number } | undefined {
  const plain = loadPlainModel(plainBytes);
  plain.weights.fill(0);
  if (plain.header.task !== 'topics') return undefined;
  const file = src.candidates ?? src.file.replace(/(\.pmfm)?$/, '-candidates.pmfm');
  const bytes = readRegularFile(file, `candidate model of ${src.id}`, { noFollow: false }, () => {});
  const cand = loadPlainModel(bytes);
  const h = plain.header;
  const c = cand.header;
  const mismatch =
    c.task !== 'topics' || c.role !== 'public'
      ? 'is not a public topic model'
      : c.B !== h.B || JSON.stringify(c.labels) !== JSON.stringify(h.labels)
        ? 'has other categories than the model'
        : JSON.stringify(c.featureSpec) !== JSON.stringify(h.featureSpec)
          ? 'uses another feature spec than the model'
          : '';
  if (mismatch) throw new Error(`model ${src.id}: candidate model ${file} ${mismatch}`);
  const bPrime = Math.min(src.bPrime ?? DEFAULT_B_PRIME, h.B);
  return { bytes, bPrime };
}

/** Package and candidate model on disk must be the ones clients pinned: their bytes are hashed at every start. */
function verifyFileHash(file: string, sha256: string, what: string): void {
  const hash = createHash('sha256');
  const buf = Buffer.alloc(1 << 20);
  const fd = fs.openSync(file, 'r');
  try {
    for (let n; (n = fs.readSync(fd, buf)) > 0;) hash.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  if (hash.digest('hex') !== sha256) {
    throw new Error(`${what} ${file} changed on disk (its SHA-256 is not the published one); restore it from a backup`);
  }
}

/** Presence, type, mode and format of a key file, checked at start rather than at the first request. */
function verifyKey(he: He, file: string): void {
  const bytes = readSecretFile(file);
  try {
    he.loadSecretKey(bytes).dispose();
  } catch {
    throw new Error(`key file ${file} is not a valid secret key; restore it from a backup`);
  } finally {
    bytes.fill(0);
  }
}

function readVersions(dir: string): VersionRecord[] {
  const file = path.join(dir, 'versions.json');
  if (!fs.existsSync(file)) return [];
  let list: unknown;
  try {
    list = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    list = undefined;
  }
  if (!Array.isArray(list)) throw new Error(`${file} is not a list of versions; restore it from a backup`);
  return list as VersionRecord[];
}

async function buildVersion(
  dir: string,
  id: string,
  version: number,
  plainBytes: Uint8Array,
  sourceSha256: string,
  topicSrc: { bytes: Uint8Array; bPrime: number } | undefined,
  progress: Progress,
): Promise<VersionRecord> {
  const plain: PlainModel = loadPlainModel(plainBytes);
  const h = plain.header;
  const params = paramsFromHeader(h);
  const he = await loadHe();
  const skBytes = he.generateSecretKey();
  const keyFile = path.join(dir, `v${version}.key`);
  const packageFile = path.join(dir, `v${version}.pmf`);
  let topics: TopicsSection | undefined;
  if (topicSrc) {
    const candidatesFile = path.join(dir, `v${version}.candidates.pmfm`);
    fs.writeFileSync(candidatesFile, topicSrc.bytes);
    topics = {
      bPrime: topicSrc.bPrime,
      candidatesSha256: createHash('sha256').update(topicSrc.bytes).digest('hex'),
      candidatesBytes: topicSrc.bytes.length,
    };
  }
  fs.rmSync(keyFile, { force: true }); // leftovers of an interrupted build
  writeSecretFile(keyFile, skBytes);
  const sk = he.loadSecretKey(skBytes);
  skBytes.fill(0);
  const providerSeed = Buffer.from(he.randomSeed()).toString('hex');
  const { ctCount, bodyBytes } = heLayout(params);
  const bodyFile = `${packageFile}.body.tmp`;
  const bodyHash = createHash('sha256');
  const fd = fs.openSync(bodyFile, 'w');
  try {
    let done = 0;
    for (const record of sk.forContext(params).encryptModel(plain.weights)) {
      bodyHash.update(record);
      fs.writeSync(fd, record);
      progress(++done, ctCount, `encrypting model ${id} v${version}`);
    }
  } finally {
    fs.closeSync(fd);
    sk.dispose();
    plain.weights.fill(0);
  }
  const header: PackageHeader = {
    format: PACKAGE_FORMAT,
    modelId: id,
    modelVersion: version,
    task: h.task,
    algorithm: h.algorithm,
    labels: h.labels,
    featureSpec: { ...h.featureSpec },
    params,
    layout: 'rows-across',
    providerSeed,
    bodyBytes,
    bodySha256: bodyHash.digest('hex'),
    createdAt: new Date().toISOString(),
    ...(topics ? { topics } : {}),
  };
  const prefix = encodePackagePrefix(header);
  const tmp = `${packageFile}.tmp`;
  fs.writeFileSync(tmp, prefix);
  fs.appendFileSync(tmp, fs.readFileSync(bodyFile));
  fs.rmSync(bodyFile);
  const pkg = fs.readFileSync(tmp);
  fs.renameSync(tmp, packageFile);
  return {
    version,
    sourceSha256,
    packageSha256: createHash('sha256').update(pkg).digest('hex'),
    packageBytes: pkg.length,
    params,
    providerSeed,
    createdAt: header.createdAt,
    ...(topics ? { topics } : {}),
    kskLayout: KSK_LAYOUT,
  };
}
