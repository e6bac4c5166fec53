// Dated bench result files: bench/results/<date>-<commit>.jsonl, one bench row
// per line with the suite, whether it was a quick run, the machine and the
// commit it measured. `npm run bench -- --save` appends to the file for today
// and HEAD; READMEs and the report (scripts/report.ts) read figures from here
// instead of restating them.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchRow } from './lib.js';

export const RESULTS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');

/** A saved row: the bench row and where it was measured. */
export interface SavedRow extends BenchRow {
  quick: boolean;
  machine: string;
  /** The measured commit (describeCommit). */
  commit: string;
}

/** The host in one line: cores, CPU model, memory, OS and Node. */
export function describeHost(): { cpu: string; memory: string; os: string; node: string } {
  const cpus = os.cpus();
  return {
    cpu: `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown'}`,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    node: process.version,
  };
}

export function hostLine(): string {
  const h = describeHost();
  return `${h.cpu}, ${h.memory}, ${h.os}, Node ${h.node}`;
}

/**
 * The measured commit, `-dirty` when the work tree has changes other than
 * result files (saving a run must not make the next one dirty), `unknown`
 * outside git.
 */
export function describeCommit(cwd: string): string {
  const head = spawnSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd, encoding: 'utf8' });
  if (head.status !== 0) return 'unknown';
  const status = spawnSync('git', ['status', '--porcelain', '--', ':/', ':(top,exclude)bench/results'], {
    cwd,
    encoding: 'utf8',
  });
  return `${head.stdout.trim()}${status.stdout.trim() ? '-dirty' : ''}`;
}

/** The file a run on `now` at `commit` appends to. */
export function resultFile(dir: string, now: Date, commit: string): string {
  return path.join(dir, `${now.toISOString().slice(0, 10)}-${commit.replace(/[^\w.-]/g, '_')}.jsonl`);
}

/** A writer that appends rows, each stamped with where it was measured, to the file for today and `commit`. */
export function rowSaver(opts: { dir: string; commit: string; quick: boolean; now?: Date }): {
  file: string;
  save(row: BenchRow): void;
} {
  const file = resultFile(opts.dir, opts.now ?? new Date(), opts.commit);
  const machine = hostLine();
  return {
    file,
    save(row) {
      fs.mkdirSync(opts.dir, { recursive: true });
      const saved: SavedRow = { ...row, quick: opts.quick, machine, commit: opts.commit };
      fs.appendFileSync(file, `${JSON.stringify(saved)}\n`);
    },
  };
}
