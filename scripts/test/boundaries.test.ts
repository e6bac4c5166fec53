// The import boundaries in eslint.config.js fire: each forbidden import is
// linted as if it were a file in the area, and the real areas are clean.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BOUNDARY_RULES = new Set(['no-restricted-imports', 'boundaries/no-area-import']);
const eslint = new ESLint({
  cwd: root,
  ruleFilter: ({ ruleId }) => BOUNDARY_RULES.has(ruleId),
  errorOnUnmatchedPattern: false, // mail/ and client/core/ may have no code yet
});

/** Boundary rule ids reported for `code` placed at `file` (which need not exist). */
async function violations(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return result.messages.map((m) => m.ruleId ?? m.message);
}

const NODE = 'no-restricted-imports';
const AREA = 'boundaries/no-area-import';

const forbidden: [file: string, code: string, rule: string][] = [
  ['extension/lib/x.ts', "import fs from 'node:fs';", NODE],
  ['extension/lib/x.ts', "import { join } from 'path';", NODE],
  ['extension/lib/x.ts', "import { readFile } from 'fs/promises';", NODE],
  ['extension/lib/x.ts', "import { openStore } from '../../provider-server/src/provider.js';", AREA],
  ['extension/content/adapters/x.ts', "export * from '../../../client/node/cli.js';", AREA],
  ['provider-server/src/x.ts', "import { messageIdOf } from '../../client/mailbox.js';", AREA],
  ['provider-server/src/x.ts', "import { MailSource } from '../../extension/lib/messages.js';", AREA],
  ['provider-server/src/workers/x.ts', "const m = await import('../../../client/core/x.js');", AREA],
  ['provider-server/test/x.test.ts', "import '../../extension/lib/rpc.js';", AREA],
  ['protocol/x.ts', "import { createHash } from 'node:crypto';", NODE],
  ['wasm/ts/x.ts', "import fs from 'fs';", NODE],
  ['models/features/x.ts', "import { jsonLines } from '../data/loaders.js';", AREA],
  ['models/plain/x.ts', "import os from 'node:os';", NODE],
  ['mail/x.ts', "import { Buffer } from 'node:buffer';", NODE],
  ['mail/x.ts', "import { store } from '../provider-server/src/store.js';", AREA],
  ['client/core/x.ts', "import path from 'node:path';", NODE],
  ['client/core/x.ts', "import { FileTrustStore } from '../node/node-storage.js';", AREA],
];

const allowed: [file: string, code: string][] = [
  ['extension/test/x.test.ts', "import assert from 'node:assert/strict';"],
  ['protocol/test/x.test.ts', "import fs from 'node:fs';"],
  ['mail/test/x.test.ts', "import fs from 'node:fs';"],
  ['client/core/test/x.test.ts', "import path from 'node:path';"],
  ['provider-server/src/x.ts', "import fs from 'node:fs'; import { frame } from '../../protocol/frame.js';"],
  ['client/node/x.ts', "import fs from 'node:fs'; import { x } from '../core/x.js';"],
  [
    'extension/lib/x.ts',
    "import { loadCore } from '../../wasm/ts/core.js'; import { x } from '../../client/core/x.js';",
  ],
  ['mail/x.ts', "import { extractFeatures } from '../models/features/index.js';"],
];

describe('import boundaries', () => {
  for (const [file, code, rule] of forbidden) {
    test(`${file}: ${code}`, async () => assert.deepEqual(await violations(file, code), [rule]));
  }
  for (const [file, code] of allowed) {
    test(`allowed in ${file}: ${code}`, async () => assert.deepEqual(await violations(file, code), []));
  }
  test('the areas as they are keep to the boundaries', async () => {
    const areas = ['extension', 'provider-server', 'protocol', 'wasm/ts', 'models', 'mail', 'client'];
    const results = await eslint.lintFiles(areas);
    const found = results.flatMap((r) => r.messages.map((m) => `${path.relative(root, r.filePath)}: ${m.message}`));
    assert.deepEqual(found, []);
  });
});
