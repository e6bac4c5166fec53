// The provider CLI end to end: every algorithm trains from JSON-lines, mbox
// and Maildir input and evaluates on another format; the TypeScript reference
// scores must equal scikit-learn's integer scores on every example.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { run, type EvaluateResult, type Prediction } from '../cli.js';
import { loadPlainModel } from '../plain/index.js';
import { tempDir } from '../../scripts/test/temp-dir.js';

const VOCAB: Record<string, string[]> = {
  spam: ['viagra', 'winner', 'cash', 'prize', 'offer', 'unsubscribe', 'click', 'free'],
  ham: ['meeting', 'agenda', 'report', 'lunch', 'project', 'deadline', 'review', 'team'],
  space: ['orbit', 'nasa', 'launch', 'shuttle', 'moon', 'rocket', 'mission', 'satellite'],
  hockey: ['puck', 'goalie', 'nhl', 'playoffs', 'rink', 'skate', 'stanley', 'score'],
  crypto: ['cipher', 'rsa', 'key', 'encryption', 'nsa', 'clipper', 'pgp', 'des'],
};
const COMMON = ['the', 'and', 'with', 'this', 'that', 'from', 'have', 'will'];

function corpus(labels: string[], perLabel: number) {
  let s = 99;
  const rnd = (n: number) => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) % n;
  return labels.flatMap((label) =>
    Array.from({ length: perLabel }, (_, i) => {
      const words = Array.from({ length: 30 }, () =>
        rnd(3) === 0 ? VOCAB[label][rnd(8)] : rnd(4) === 0 ? VOCAB[labels[rnd(labels.length)]][rnd(8)] : COMMON[rnd(8)],
      );
      const raw = `From: sender${rnd(50)}@example.org\nSubject: ${words.slice(0, 3).join(' ')}\n\n${words.join(' ')}\n`;
      return { label, raw, id: `${label}-${i}` };
    }),
  );
}

function writeInputs(dir: string, labels: string[]) {
  const docs = corpus(labels, 60);
  fs.writeFileSync(
    path.join(dir, 'data.jsonl'),
    docs.map((d) => JSON.stringify({ label: d.label, text: d.raw, id: d.id })).join('\n'),
  );
  const mboxArgs = labels.map((l) => {
    const f = path.join(dir, `${l}.mbox`);
    const msgs = docs.filter((d) => d.label === l).map((d) => `From ${d.id}@x Mon Jan  1 00:00:00 2024\n${d.raw}\n`);
    fs.writeFileSync(f, msgs.join(''));
    return ['--mbox', `${l}=${f}`];
  });
  for (const d of docs) {
    const p = path.join(dir, 'maildir', d.label, d.id.endsWith('0') ? 'new' : 'cur');
    fs.mkdirSync(p, { recursive: true });
    fs.writeFileSync(path.join(p, `${d.id}:2,S`), d.raw);
  }
  return {
    jsonl: ['--jsonl', path.join(dir, 'data.jsonl')],
    mbox: mboxArgs.flat(),
    maildir: ['--maildir', path.join(dir, 'maildir')],
  };
}

const PLAN = [
  { task: 'spam', algorithm: 'grnb', train: 'jsonl', evaluate: 'mbox' },
  { task: 'spam', algorithm: 'lr', train: 'mbox', evaluate: 'maildir' },
  { task: 'spam', algorithm: 'svm', train: 'maildir', evaluate: 'jsonl' },
  { task: 'topics', algorithm: 'mnb', train: 'jsonl', evaluate: 'maildir' },
  { task: 'topics', algorithm: 'mlr', train: 'mbox', evaluate: 'jsonl' },
  { task: 'topics', algorithm: 'ovr-svm', train: 'maildir', evaluate: 'mbox' },
] as const;

test('train and evaluate every algorithm from JSON-lines, mbox and Maildir', async () => {
  const dir = tempDir('pmf-cli-');
  const inputs = {
    spam: writeInputs(fs.mkdtempSync(path.join(dir, 's')), ['ham', 'spam']),
    topics: writeInputs(fs.mkdtempSync(path.join(dir, 't')), ['crypto', 'hockey', 'space']),
  };
  for (const p of PLAN) {
    const out = path.join(dir, `${p.algorithm}.pmfm`);
    const extra = p.task === 'topics' ? ['--public-out', path.join(dir, `${p.algorithm}.public.pmfm`)] : [];
    await run([
      'train',
      '--task',
      p.task,
      '--algorithm',
      p.algorithm,
      '--out',
      out,
      '--N',
      '4096',
      ...extra,
      ...inputs[p.task][p.train],
    ]);
    const m = loadPlainModel(new Uint8Array(fs.readFileSync(out)));
    assert.equal(m.header.algorithm, p.algorithm);
    assert.equal(m.header.featureSpec.boolean, p.algorithm === 'grnb');
    const res = (await run(['evaluate', '--model', out, '--all', ...inputs[p.task][p.evaluate]])) as EvaluateResult;
    assert.equal(res.total, p.task === 'spam' ? 120 : 180);
    assert.equal(res.agree, res.total, 'TypeScript and Python integer scores agree');
    assert.ok(res.quantized.accuracy >= 0.9, `${p.algorithm}: accuracy ${res.quantized.accuracy}`);
    assert.ok(res.float && Math.abs(res.float.accuracy - res.quantized.accuracy) <= 0.02);
  }
});

test('evaluate reports F1 and writes per-message predictions on a seeded random split', async () => {
  const dir = tempDir('pmf-cli-');
  const data = writeInputs(dir, ['ham', 'spam']).jsonl;
  const model = path.join(dir, 'm.pmfm');
  const split = (seed: number) => ['--split', 'random', '--seed', String(seed), '--test-fraction', '0.25'];
  await run(['train', '--task', 'spam', '--algorithm', 'lr', '--out', model, '--N', '4096', ...split(7), ...data]);
  const evaluate = async (seed: number) => {
    const out = path.join(dir, `seed${seed}.jsonl`);
    const res = (await run(['evaluate', '--model', model, '--out', out, ...split(seed), ...data])) as EvaluateResult;
    const lines = fs.readFileSync(out, 'utf8').trim().split('\n');
    return { res, lines, preds: lines.map((l) => JSON.parse(l) as Prediction) };
  };
  const { res, lines, preds } = await evaluate(7);
  assert.equal(res.total, 30, 'a quarter of 120 messages held out');
  const { precision, recall, f1, accuracy } = res.quantized;
  assert.ok(Math.abs(f1 - (2 * precision * recall) / (precision + recall)) < 1e-9);
  assert.equal(preds.length, 30);
  assert.equal(preds.filter((p) => p.predicted === p.label).length / preds.length, accuracy);
  for (const p of preds) {
    assert.deepEqual(Object.keys(p), ['id', 'label', 'predicted', 'score']);
    assert.match(p.id, /^(ham|spam)-\d+$/);
    assert.equal(p.label, p.id.split('-')[0]);
    if (p.score !== 0) assert.equal(p.predicted, p.score > 0 ? 'spam' : 'ham', 'score is the spam margin');
  }
  assert.deepEqual((await evaluate(7)).lines, lines, 'the same seed holds out the same messages');
  const other = new Set((await evaluate(8)).preds.map((p) => p.id));
  assert.ok(
    preds.some((p) => !other.has(p.id)),
    'another seed holds out others',
  );
  await assert.rejects(run(['evaluate', '--model', model, '--split', 'hash', ...data]), /--split must be random/);
});

test('CLI errors are clear and leave no model behind', async () => {
  const dir = tempDir('pmf-cli-');
  const out = path.join(dir, 'm.pmfm');
  await assert.rejects(
    run(['train', '--task', 'spam', '--out', out, '--corpus', 'spamassassin']),
    /--algorithm is required/,
  );
  await assert.rejects(
    run(['train', '--task', 'mail', '--algorithm', 'lr', '--out', out]),
    /--task must be spam or topics/,
  );
  const f = path.join(dir, 'three.jsonl');
  fs.writeFileSync(f, ['a', 'b', 'c'].map((l) => JSON.stringify({ label: l, text: 'x y' })).join('\n'));
  await assert.rejects(
    run(['train', '--task', 'spam', '--algorithm', 'lr', '--out', out, '--jsonl', f]),
    /exactly two labels/,
  );
  await assert.rejects(run(['train', '--task', 'topics', '--algorithm', 'lr', '--out', out, '--jsonl', f]), /failed/);
  assert.equal(fs.existsSync(out), false);
});
