// Runs the scikit-learn half (models/pmf_models) in models/.venv.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const modelsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function pythonPath(): string {
  const py = process.env.PMF_PYTHON ?? path.join(modelsDir, '.venv/bin/python');
  if (!fs.existsSync(py)) throw new Error(`${py} not found: run scripts/setup.sh (creates models/.venv)`);
  return py;
}

/** Runs `python -m pmf_models ...`; output is shown unless capture is set. */
export function runPython(args: string[], capture = false): string {
  const res = spawnSync(pythonPath(), ['-m', 'pmf_models', ...args], {
    cwd: modelsDir,
    stdio: capture ? ['ignore', 'pipe', 'inherit'] : 'inherit',
    encoding: 'utf8',
    // One BLAS/OpenMP thread: on a shared machine oversubscribed threads made
    // lbfgs several times slower, and results stay bit-for-bit reproducible.
    env: { ...process.env, OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1', MKL_NUM_THREADS: '1' },
    maxBuffer: 256 * 1024 * 1024,
  });
  if (res.status !== 0) throw new Error(`pmf_models ${args[0]} failed (exit ${res.status})`);
  return res.stdout ?? '';
}
