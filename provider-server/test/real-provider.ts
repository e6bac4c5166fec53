// A real provider for tests that need the real crypto: crypto workers, the
// store and the bundled models, in a fresh temporary data directory (removed
// by close()). The session-layer tests use harness.ts's crypto double instead.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type ConfigOverrides, type ServerConfig } from '../src/config.js';
import { startProvider, type Provider } from '../src/provider.js';

/** The models bundled in models/default, by id. */
export const BUNDLED_MODELS = {
  spam: path.resolve('models/default/spam.pmfm'),
  topics: path.resolve('models/default/topics.pmfm'),
} as const;

export interface RealProvider extends Provider {
  /** The temporary folder; the data directory is `dataDir` inside it. */
  dir: string;
  config: ServerConfig;
}

/** A loopback provider's configuration on `dataDir`: any free port, one crypto worker, the bundled spam model. */
export function loopbackConfig(dataDir: string, overrides: ConfigOverrides = {}): ServerConfig {
  return loadConfig({
    env: {},
    overrides: { port: 0, dataDir, workers: 1, models: [{ id: 'spam', file: BUNDLED_MODELS.spam }], ...overrides },
  });
}

export async function startRealProvider(
  opts: {
    models?: (keyof typeof BUNDLED_MODELS)[];
    overrides?: ConfigOverrides;
    log?: (line: string) => void;
    progress?: (done: number, total: number, label: string) => void;
  } = {},
): Promise<RealProvider> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-provider-'));
  const config = loopbackConfig(path.join(dir, 'data'), {
    models: (opts.models ?? ['spam']).map((id) => ({ id, file: BUNDLED_MODELS[id] })),
    ...opts.overrides,
  });
  const provider = await startProvider(config, {
    log: opts.log ?? (() => undefined),
    progress: opts.progress ?? (() => undefined),
  });
  return {
    ...provider,
    dir,
    config,
    async close() {
      await provider.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
