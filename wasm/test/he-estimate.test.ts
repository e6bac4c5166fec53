// docs/crypto.md#security-of-the-keys: the security estimate
// (wasm/tools/lattice_estimate.py) must describe the parameters the code
// uses, and the docs must quote its current output. Changing q_ks, n', the
// error width, the model key's ring or the user-key budget fails here until
// the estimate is re-run, shows every user key ≥ 128 bits after its whole
// budget, and its table is quoted again.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { HE_LWE_N, HE_N, HE_Q1, HE_Q2, HE_QKS } from '../ts/he.js';
import { USER_KEY_BUDGET_MAX } from '../../provider-server/src/limits.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const script = path.join(root, 'wasm/tools/lattice_estimate.py');
const run = (...args: string[]): string =>
  execFileSync(path.join(root, 'models/.venv/bin/python'), [script, ...args], { encoding: 'utf8' });

interface Row {
  instance: string;
  hints: number;
  classical: number;
  quantum: number;
}

it("the estimate's parameters are the code's, and every user key keeps ≥ 128 bits after its budget", () => {
  const { params, rows } = JSON.parse(run('--json')) as { params: Record<string, string | number>; rows: Row[] };
  const eta = Number(
    /constexpr unsigned kCbdEta = (\d+);/.exec(fs.readFileSync(path.join(root, 'wasm/src/he/ring.h'), 'utf8'))?.[1],
  );
  assert.deepEqual(
    params,
    {
      n: HE_N,
      q: (HE_Q1 * HE_Q2).toString(),
      n_user: HE_LWE_N,
      q_ks: Number(HE_QKS),
      cbd_eta: eta,
      secret: 'ternary',
      user_key_budget: USER_KEY_BUDGET_MAX,
    },
    'the code changed a parameter the estimate assumed: update wasm/tools/lattice_estimate.py, re-run it, re-quote it',
  );
  const user = rows.find((r) => r.instance.startsWith('user key at q_ks') && r.hints === USER_KEY_BUDGET_MAX)!;
  assert.ok(user.classical >= 128, `a user key after ${USER_KEY_BUDGET_MAX} hints: ${user.classical} bits`);
  // The calibration: the HomomorphicEncryption.org 128-bit rows come out at 128 ± 2.
  for (const r of rows.filter((x) => x.instance.startsWith('HE standard')))
    assert.ok(Math.abs(r.classical - 128) <= 2, `${r.instance}: ${r.classical}`);
});

it('docs/crypto.md quotes the estimate as it now runs', () => {
  const docs = fs.readFileSync(path.join(root, 'docs/crypto.md'), 'utf8');
  const table = run().trimEnd();
  assert.ok(docs.includes(`\`\`\`\n${table}\n\`\`\``), `docs/crypto.md must quote, in a code block:\n${table}`);
});

it('the docs state one user-key budget: every "N bits of/per user key" is USER_KEY_BUDGET_MAX', () => {
  const said = ['docs/security.md', 'docs/threat-model.md', 'docs/crypto.md', 'README.md'].flatMap((f) =>
    [
      ...fs
        .readFileSync(path.join(root, f), 'utf8')
        .matchAll(/(?<![\d.])(\d[\d,]*) bits (?:of|per) (?:each |any one |one )?user key/g),
    ].map((m) => `${f}: ${m[0]}`),
  );
  assert.ok(said.length >= 3, said.join('\n'));
  for (const s of said) assert.match(s, new RegExp(`: ${USER_KEY_BUDGET_MAX} bits`), s);
});
