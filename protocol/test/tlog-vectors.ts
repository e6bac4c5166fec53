// Runs the Go reference program in tlog-vectors/ (Go's golang.org/x/mod/sumdb
// and filippo.io/torchwood, from the module cache scripts/setup.sh fills) on
// one JSON request and returns its answer.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'tlog-vectors');

export function goReference<T>(mode: 'tree' | 'sign' | 'open', request: unknown): T {
  const r = spawnSync('go', ['run', '.', mode], {
    cwd: dir,
    input: JSON.stringify(request),
    encoding: 'utf8',
    // Offline: the modules come from the cache (scripts/setup.sh runs `go mod download` here).
    env: { ...process.env, GOFLAGS: '-mod=mod', GOPROXY: 'off', GOTOOLCHAIN: 'local' },
    timeout: 300_000, // the first run compiles x/mod and torchwood
  });
  if (r.error) throw new Error(`go run ${mode}: ${r.error.message} (is Go installed? see scripts/setup.sh)`);
  if (r.status !== 0) throw new Error(`go run ${mode} failed (run scripts/setup.sh to fetch its modules): ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
