// Gets the package log's checkpoints cosigned by the witnesses the operator
// configured (C2SP tlog-witness: POST <url>/add-checkpoint with the size the
// witness last saw, a consistency proof from there, and the signed
// checkpoint). A witness cosigns only a checkpoint consistent with everything
// it cosigned before, so its cosignature is what lets clients believe the
// head they are shown is the one every client is shown. Valid cosignatures are
// kept with the checkpoint (package-log.ts); the checkpoint is resubmitted
// every refreshSeconds so their times stay recent.
import { formatCheckpoint } from '../../protocol/checkpoint.js';
import {
  parseNote,
  parseVerifierKey,
  SIG_COSIGNATURE_V1,
  toBase64,
  verifyCosignature,
  type NoteSignature,
  type VerifierKey,
} from '../../protocol/signed-note.js';
import type { PackageLog } from './package-log.js';

export interface WitnessConfig {
  /** Base URL; the checkpoint goes to <url>/add-checkpoint. */
  url: string;
  /** The witness's cosignature verifier key (litewitness prints it at start). */
  vkey: string;
}

export interface PackageLogConfig {
  /** The log's origin (checkpoint line 1), e.g. mail.example.org/pmf-package-log; default: one derived from the key. */
  origin?: string;
  witnesses: WitnessConfig[];
  refreshSeconds: number;
}

export const PACKAGE_LOG_DEFAULTS: PackageLogConfig = { witnesses: [], refreshSeconds: 3600 };

/** Validates the configuration's packageLog section; throws saying what is wrong. */
export function parsePackageLogConfig(x: unknown): PackageLogConfig {
  const bad = (why: string): never => {
    throw new Error(`config: packageLog.${why}`);
  };
  const c = { ...PACKAGE_LOG_DEFAULTS, ...(x as object) } as Record<string, unknown>;
  if (c.origin !== undefined && (typeof c.origin !== 'string' || !/^[^\s+]{1,200}$/.test(c.origin)))
    bad('origin must be a name without spaces or "+", like mail.example.org/pmf-package-log');
  if (!Array.isArray(c.witnesses) || c.witnesses.length > 64) bad('witnesses must be a list of {url, vkey}');
  const witnesses = (c.witnesses as Record<string, unknown>[]).map((w, i) => {
    if (typeof w?.url !== 'string' || !/^https?:\/\/[^/\s]+/.test(w.url))
      bad(`witnesses[${i}].url must be an http(s) URL`);
    try {
      if (parseVerifierKey(String(w.vkey)).type !== SIG_COSIGNATURE_V1) throw new Error('not a cosignature key');
    } catch (e) {
      bad(`witnesses[${i}].vkey: ${(e as Error).message}`);
    }
    return { url: (w.url as string).replace(/\/+$/, ''), vkey: String(w.vkey).trim() };
  });
  const refresh = c.refreshSeconds;
  if (typeof refresh !== 'number' || !Number.isInteger(refresh) || refresh < 60 || refresh > 7 * 86400)
    bad('refreshSeconds must be a whole number of seconds from 60 to 604800');
  return {
    ...(c.origin === undefined ? {} : { origin: c.origin as string }),
    witnesses,
    refreshSeconds: refresh as number,
  };
}

export type WitnessOutcome = { witness: string; time: number } | { witness: string; error: string };

/** What a witness may send back; its answers are a few lines. */
const MAX_ANSWER_BYTES = 16_384;

async function answerText(res: Response): Promise<string> {
  const body = new Uint8Array(await res.arrayBuffer());
  if (body.length > MAX_ANSWER_BYTES) throw new Error(`answered ${body.length} bytes`);
  return new TextDecoder().decode(body);
}

export class LogWitnesses {
  private readonly witnesses: { url: string; key: VerifierKey }[];
  /** The tree size each witness last said it has (409) or cosigned. */
  private readonly known = new Map<string, number>();
  private timer?: ReturnType<typeof setInterval>;

  constructor(
    private readonly log: PackageLog,
    config: readonly WitnessConfig[],
    private readonly opts: { timeoutMs?: number; log?: (line: string) => void; fetch?: typeof fetch } = {},
  ) {
    this.witnesses = config.map((w) => ({ url: w.url, key: parseVerifierKey(w.vkey) }));
  }

  /** Submits the current checkpoint to every witness at once and keeps the valid cosignatures. */
  async cosign(): Promise<WitnessOutcome[]> {
    const text = formatCheckpoint(this.log.checkpoint);
    const outcomes = await Promise.all(
      this.witnesses.map(async (w): Promise<[WitnessOutcome, NoteSignature[]]> => {
        try {
          const { time, lines } = await this.submit(w, text);
          return [{ witness: w.key.name, time }, lines];
        } catch (e) {
          return [{ witness: w.key.name, error: (e as Error).message }, []];
        }
      }),
    );
    this.log.addCosignatures(
      text,
      outcomes.flatMap(([, lines]) => lines),
    );
    for (const [o] of outcomes) {
      this.opts.log?.(
        'time' in o
          ? `package log: witness ${o.witness} cosigned ${this.log.fingerprint}`
          : `package log: witness ${o.witness} did not cosign ${this.log.fingerprint}: ${o.error}`,
      );
    }
    return outcomes.map(([o]) => o);
  }

  private async submit(
    w: { url: string; key: VerifierKey },
    text: string,
  ): Promise<{ time: number; lines: NoteSignature[] }> {
    const size = this.log.size;
    let old = Math.min(this.known.get(w.key.name) ?? size, size);
    // One deadline for the whole exchange, its retry included.
    const signal = AbortSignal.timeout(this.opts.timeoutMs ?? 10_000);
    for (let attempt = 0; attempt < 2; attempt++) {
      const proof = old > 0 && old < size ? this.log.consistencyProof(old).map(toBase64) : [];
      const signed = this.log.logSignedCheckpoint();
      if (!signed.startsWith(`${text}\n`)) throw new Error('the log moved on while it was being submitted');
      const res = await (this.opts.fetch ?? fetch)(`${w.url}/add-checkpoint`, {
        method: 'POST',
        body: `old ${old}\n${proof.map((p) => `${p}\n`).join('')}\n${signed}`,
        signal,
      });
      const answer = await answerText(res);
      if (res.status === 409) {
        const seen = /^(0|[1-9][0-9]{0,15})\n?$/.exec(answer) ? Number(answer) : NaN;
        if (!Number.isSafeInteger(seen)) throw new Error(`answered 409 without a tree size`);
        if (seen > size)
          throw new Error(
            `it has cosigned size ${seen} of this log, more than the ${size} entries here: the log was truncated or restored from an older backup; restore package-log.jsonl and package-log.checkpoint from the newest backup`,
          );
        this.known.set(w.key.name, seen);
        old = seen;
        continue;
      }
      if (res.status === 422)
        throw new Error(
          `it refuses the checkpoint as inconsistent with size ${old} it cosigned before: the log was edited or replaced (a fork); restore it from a backup`,
        );
      if (res.status === 403 || res.status === 404)
        throw new Error(
          `it does not know this log or its key (${res.status}); ask its operator to add origin ${this.log.origin} with key ${this.log.vkey}`,
        );
      if (res.status !== 200) throw new Error(`answered HTTP ${res.status}: ${answer.slice(0, 200)}`);
      const lines = parseNote(`${text}\n${answer}`).signatures.filter(
        (s) => s.name === w.key.name && s.keyId === w.key.keyId,
      );
      const time = verifyCosignature({ text, signatures: lines }, w.key);
      if (time === undefined || lines.length === 0) throw new Error('answered without a valid cosignature');
      this.known.set(w.key.name, size);
      return { time, lines };
    }
    throw new Error(`its tree size keeps changing (last ${old}); trying again later`);
  }

  /** Resubmits the checkpoint every `seconds`, so cosignature times stay recent. */
  start(seconds: number): void {
    this.stop();
    if (this.witnesses.length === 0) return;
    let running = false;
    this.timer = setInterval(() => {
      if (running) return; // a slow witness must not pile up submissions
      running = true;
      this.cosign()
        .catch((e: unknown) => this.opts.log?.(`package log: cosignatures not kept: ${(e as Error).message}`))
        .finally(() => (running = false));
    }, seconds * 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
