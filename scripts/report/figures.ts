// The report's figures: which bench rows each one plots, beside which of
// Pretzel's published figures. A row's `reference` becomes the Pretzel bar
// (or the named reference) next to this project's bar for the same case.
import type { BenchRow } from './rows.js';

export interface Point {
  /** The category on the x axis (bars), or the series' name for a line. */
  label: string;
  /** Numeric x position, for line figures. */
  x?: number;
  series: string;
  value: number;
  unit: string;
  /** The bench row (suite/case metric) or the published figure this value comes from. */
  source: string;
  /** The bench row's own note: what was measured, and where a quick run's size differs from the case name. */
  note?: string;
}

export interface Figure {
  id: string;
  title: string;
  /** Where in Pretzel this one is reproduced from: a figure number as printed in the paper, or its part of the evaluation. */
  pretzel: string;
  /** One or two plain sentences under the figure. */
  about: string;
  kind: 'bars' | 'lines';
  /** The unit on the value axis, after scaling. */
  unit: string;
  xTitle?: string;
  log?: boolean;
  points(rows: BenchRow[]): Point[];
}

export const OURS = 'this project';
export const PRETZEL = 'Pretzel (paper)';

interface Select {
  suite: string;
  cases: RegExp;
  metric?: string;
  /** Multiplies values and references into the figure's unit. */
  scale?: number;
  unit: string;
  label?: (c: string) => string;
  /** The series a row belongs to; references are drawn only for OURS rows. */
  series?: (c: string) => string;
  /** What a row's `reference` is; Pretzel's published number unless said. */
  reference?: string;
  pretzel: string;
}

/**
 * `client_N200K_L692` → `client N = 200K, L = 692`: parameters read as the
 * paper writes them. A letter's second use is the primed one (`B2048_B20` is
 * B = 2048, B′ = 20).
 */
export function caseLabel(c: string): string {
  const words: string[] = [];
  const params: string[] = [];
  const seen = new Set<string>();
  for (const token of c.split('_')) {
    const m = /^([A-Z])(\d[\dKM.]*)$/.exec(token);
    if (!m) words.push(token);
    else {
      params.push(`${m[1]}${seen.has(m[1]) ? '′' : ''} = ${m[2]}`);
      seen.add(m[1]);
    }
  }
  return [words.join(' '), params.join(', ')].filter(Boolean).join(' ');
}

/** This project's rows matching `s`, each with its reference beside it. */
function compare(rows: BenchRow[], s: Select): Point[] {
  const scale = s.scale ?? 1;
  const label = s.label ?? caseLabel;
  const points: Point[] = [];
  for (const r of rows) {
    if (r.suite !== s.suite || !s.cases.test(r.case) || (s.metric && r.metric !== s.metric)) continue;
    const series = s.series?.(r.case) ?? OURS;
    const at = label(r.case);
    points.push({
      label: at,
      series,
      value: r.value * scale,
      unit: s.unit,
      source: `${r.suite}/${r.case} ${r.metric}`,
      note: r.note,
    });
    if (r.reference !== undefined && series === OURS)
      points.push({
        label: at,
        series: s.reference ?? PRETZEL,
        value: r.reference * scale,
        unit: s.unit,
        source: s.reference ? `${r.suite}/${r.case} reference` : `Pretzel ${s.pretzel}`,
      });
  }
  // A peer row may carry the same reference as ours: draw it once.
  const seen = new Set<string>();
  return points.filter((p) => !seen.has(`${p.label}\0${p.series}`) && seen.add(`${p.label}\0${p.series}`));
}

/** A bar figure over one selection (or several with the same unit). */
function bars(f: Omit<Figure, 'kind' | 'points' | 'unit'>, ...selects: Omit<Select, 'pretzel'>[]): Figure {
  return {
    ...f,
    kind: 'bars',
    unit: selects[0].unit,
    points: (rows) => selects.flatMap((s) => compare(rows, { ...s, pretzel: f.pretzel })),
  };
}

const KB = 1 / 1024;
const MB = 1e-6;
const PCT = 100;
const peer = (prefix: string, name: string) => (c: string) => (c.startsWith(prefix) ? name : OURS);
const without = (prefix: string) => (c: string) => caseLabel(c.replace(prefix, ''));
const gcLabel = (c: string) => caseLabel(c.replace('empwasm_', '').replace('_per_input', ''));

/**
 * Pretzel Fig. 14 analog for one corpus: candidate recall vs B', one line per
 * public-model share and reference (the true topic, or the full model's topic).
 */
function candidates(id: string, corpus: string, prefix: string): Figure {
  const re = new RegExp(`^${prefix}candidates_(fullmodel_)?B(\\d+)_public(\\d+)pct$`);
  return {
    id,
    title: `Topics: topic among the B' candidates, ${corpus}`,
    pretzel: 'Fig. 14',
    about: `Share of test documents whose topic is among the B' topics the public model proposes, for public models trained on 1–10 % of the training data; measured against the true topic and against the topic the full model gives (what private extraction can at best return).`,
    kind: 'lines',
    unit: '%',
    xTitle: "B' (candidate topics)",
    points: (rows) =>
      rows.flatMap((r) => {
        const m = r.suite === 'models' ? re.exec(r.case) : null;
        if (!m) return [];
        const series = `${OURS}, public model on ${m[3]} %, ${m[1] ? 'full-model' : 'true'} topic`;
        return [
          { label: series, x: Number(m[2]), series, value: r.value * PCT, unit: '%', source: `models/${r.case}` },
        ];
      }),
  };
}

const ALGORITHMS: Record<string, string> = {
  grnb: 'GR-NB',
  lr: 'LR',
  svm: 'SVM',
  mnb: 'MNB',
  mlr: 'multinomial LR',
};
const CORPORA: Record<string, string> = { spamassassin: 'SpamAssassin', '20news': '20 Newsgroups', reuters: 'Reuters' };
/** `spamassassin_lr` → corpus and algorithm; the accuracy table and figure share it. */
export const MODEL_CASE = /^(spamassassin|20news|reuters)_(grnb|lr|svm|mnb|mlr)$/;
export const modelName = (c: string): string => {
  const m = MODEL_CASE.exec(c);
  return m ? `${CORPORA[m[1]]} ${ALGORITHMS[m[2]]}` : c;
};

export const FIGURES: Figure[] = [
  bars(
    {
      id: 'spam-provider-cpu',
      title: 'Spam: provider CPU per email',
      pretzel: 'Fig. 6',
      about:
        'CPU the provider spends per email: the private protocol, a provider that reads the plaintext (NoPriv), and the Paillier baseline Pretzel compares with. L is the number of distinct words in the email.',
      log: true,
    },
    {
      suite: 'spam',
      cases: /^provider_(private|nopriv|paillier)_L\d+$/,
      unit: 'µs',
      label: (c) => caseLabel(c.replace(/^provider_\w+?_/, '')),
      series: (c) =>
        c.includes('private')
          ? `${OURS}, private`
          : c.includes('nopriv')
            ? 'NoPriv baseline (plaintext)'
            : 'Paillier baseline',
    },
  ),
  bars(
    {
      id: 'spam-provider-ratio',
      title: 'Spam: provider CPU relative to the baselines',
      pretzel: 'Fig. 6',
      about:
        'Provider CPU of the private protocol divided by that of NoPriv or of the Paillier baseline; lower is better.',
    },
    { suite: 'spam', cases: /^private_vs_/, metric: 'ratio', unit: '×', label: without('private_') },
  ),
  bars(
    {
      id: 'spam-client',
      title: 'Spam: client time per email',
      pretzel: 'Fig. 7',
      about:
        'Time on the recipient’s device per email, by model size N and email length L. Pretzel reports N = 5M, L = 5000.',
      log: true,
    },
    { suite: 'spam', cases: /^client_N/, unit: 'ms', label: without('client_') },
  ),
  bars(
    {
      id: 'spam-network',
      title: 'Spam: network per email',
      pretzel: 'Fig. 8',
      about: 'Bytes exchanged between client and provider to reach one spam verdict.',
    },
    { suite: 'spam', cases: /^network_per_email$/, unit: 'KB', scale: KB, label: () => 'per email' },
  ),
  bars(
    {
      id: 'spam-model-size',
      title: 'Spam: encrypted model size',
      pretzel: 'Fig. 8',
      about: 'Size of the encrypted model the client stores, by number of features N. Pretzel packs B = 2 per slot.',
      log: true,
    },
    { suite: 'he', cases: /^model_bytes_N\w+_B1$/, unit: 'MB', scale: MB, label: without('model_bytes_') },
  ),
  bars(
    {
      id: 'topics-model-size',
      title: 'Topics: encrypted model size at B = 2048',
      pretzel: 'Fig. 12',
      about: 'Size of the encrypted topic model the client stores, by number of features N, for B = 2048 topics.',
      log: true,
    },
    { suite: 'he', cases: /^model_bytes_N\w+_B2048$/, unit: 'MB', scale: MB, label: without('model_bytes_') },
  ),
  bars(
    {
      id: 'topics-provider-cpu',
      title: 'Topics: provider CPU per email (B = 2048, B′ = 20)',
      pretzel: 'Fig. 10',
      about:
        'Provider CPU per email for private topic extraction and for NoPriv. Pretzel’s bar is its published private/NoPriv ratio (1.78×) applied to our NoPriv time.',
    },
    {
      suite: 'topics',
      cases: /^provider_(private|nopriv)_B/,
      unit: 'µs',
      label: (c) => (c.includes('nopriv') ? 'NoPriv' : 'private'),
    },
  ),
  bars(
    {
      id: 'topics-client',
      title: 'Topics: client time per email',
      pretzel: 'topic evaluation (text)',
      about: 'Time on the recipient’s device per email at N = 20K features, B = 2048 topics, B′ = 20 candidates.',
    },
    { suite: 'topics', cases: /^client_N/, unit: 'ms', label: without('client_') },
  ),
  bars(
    {
      id: 'topics-network',
      title: 'Topics: network per email',
      pretzel: 'Fig. 11',
      about: 'Bytes exchanged per email for private topic extraction with B′ candidate topics.',
    },
    {
      suite: 'topics',
      cases: /^network_per_email_B/,
      unit: 'KB',
      scale: KB,
      label: (c) => `B′ = ${c.replace('network_per_email_B', '')}`,
    },
  ),
  bars(
    {
      id: 'topics-accuracy',
      title: 'Topics: accuracy of the decomposed classifier (B′ = 20)',
      pretzel: 'no published number (the setting of Fig. 14)',
      about:
        'Share of test documents whose extracted topic is the true one, with the public model trained on 5 % of the data.',
    },
    {
      suite: 'topics',
      cases: /^accuracy_(20news|reuters)_B\d+$/,
      unit: '%',
      scale: PCT,
      label: (c) =>
        c.replace(/^accuracy_(\w+)_B(\d+)$/, (_, corpus: string, b: string) => `${CORPORA[corpus]}, B′ = ${b}`),
    },
  ),
  bars(
    {
      id: 'private-equals-plaintext',
      title: 'Private result equals the plaintext result',
      pretzel: 'no counterpart (our own check)',
      about:
        'Share of test emails where the private protocol’s verdict or topic equals the plaintext classifier’s. The target is 100 %.',
    },
    ...['spam', 'topics'].map((suite) => ({
      suite,
      cases: /^private_equals_plaintext$/,
      unit: '%',
      scale: PCT,
      label: () => suite,
      reference: 'target',
    })),
  ),
  bars(
    {
      id: 'models-accuracy',
      title: 'Accuracy per algorithm and corpus',
      pretzel: 'Fig. 9',
      about:
        'Held-out accuracy of the quantized model the private protocol evaluates, and of the float model before quantization. Pretzel’s bar is the lowest spam accuracy it reports (98.1 %, other corpora).',
    },
    {
      suite: 'models',
      cases: /^(spamassassin|20news|reuters)_(grnb|lr|svm|mnb|mlr)(_float)?$/,
      metric: 'accuracy',
      unit: '%',
      scale: PCT,
      label: (c) => modelName(c.replace(/_float$/, '')),
      series: (c) => (c.endsWith('_float') ? `${OURS}, float` : OURS),
    },
  ),
  {
    id: 'models-feature-selection',
    title: 'Topics: accuracy vs share of features kept (20 Newsgroups, MNB)',
    pretzel: 'Fig. 13',
    about: 'Accuracy when chi-square feature selection keeps only a share of the feature rows seen in training.',
    kind: 'lines',
    unit: '%',
    xTitle: 'features kept (%)',
    points: (rows) =>
      rows.flatMap((r) => {
        const m = r.suite === 'models' ? /^(\w+?)_mnb_features(\d+)pct$/.exec(r.case) : null;
        if (!m) return [];
        const series = `${OURS}, ${CORPORA[m[1]] ?? m[1]}`;
        return [
          { label: series, x: Number(m[2]), series, value: r.value * PCT, unit: '%', source: `models/${r.case}` },
        ];
      }),
  },
  candidates('models-candidates-reuters', 'Reuters', ''),
  candidates('models-candidates-20news', '20 Newsgroups', '20news_'),
  bars(
    {
      id: 'gc-cpu',
      title: 'Garbled circuits: CPU per comparison and per argmax input',
      pretzel: 'microbenchmarks',
      about:
        'Both roles together, including the amortized OT extension; argmax is per input value. T is the comparison width in bits; emp-wasm is an independent garbled-circuit library run on the same comparison, including its setup.',
      log: true,
    },
    {
      suite: 'gc',
      cases: /^(empwasm_)?(cmp_T\d+|argmax_per_input_B\d+)$/,
      metric: 'cpu_us',
      unit: 'µs',
      label: gcLabel,
      series: peer('empwasm_', 'emp-wasm (peer)'),
    },
  ),
  bars(
    {
      id: 'gc-bytes',
      title: 'Garbled circuits: bytes per comparison and per argmax input',
      pretzel: 'microbenchmarks',
      about: 'Bytes on the wire, both directions, including the OT extension; argmax is per input value.',
      log: true,
    },
    {
      suite: 'gc',
      cases: /^(empwasm_)?(cmp_T\d+|argmax_per_input_B\d+)$/,
      metric: 'bytes',
      unit: 'B',
      label: gcLabel,
      series: peer('empwasm_', 'emp-wasm (peer)'),
    },
  ),
  bars(
    {
      id: 'gc-ot-extension',
      title: 'OT extension throughput',
      pretzel: 'microbenchmarks',
      about: 'Oblivious transfers per second from the IKNP extension with the KOS check, both roles.',
    },
    { suite: 'gc', cases: /^ot_extension$/, unit: 'million OT/s', scale: 1e-6, label: () => 'OT extension' },
  ),
  bars(
    {
      id: 'gc-base-ot',
      title: 'Base OTs per session',
      pretzel: 'microbenchmarks',
      about: 'Time for the 128 base OTs a client and provider run once per session, both roles.',
    },
    { suite: 'gc', cases: /^base_ot_session$/, unit: 'ms', label: () => '128 base OTs' },
  ),
  bars(
    {
      id: 'he-decrypt',
      title: 'Lattice layer: decrypt and shift-and-add',
      pretzel: 'microbenchmarks',
      about:
        'Provider decryption of one client ciphertext, and the cost per word of adding a model row into the dot product. node-seal (Microsoft SEAL, BFV) is the peer.',
      log: true,
    },
    {
      suite: 'he',
      cases: /^(nodeseal_)?(decrypt|shift_add)$/,
      unit: 'µs',
      label: without('nodeseal_'),
      series: peer('nodeseal_', 'node-seal (peer)'),
    },
  ),
  bars(
    {
      id: 'he-dot',
      title: 'Lattice layer: client dot product',
      pretzel: 'microbenchmarks',
      about: 'Encrypted dot product of the model with one email, by model size N and email length L.',
      log: true,
    },
    {
      suite: 'he',
      cases: /^(nodeseal_)?dot_N/,
      unit: 'ms',
      label: without('nodeseal_'),
      series: peer('nodeseal_', 'node-seal (peer)'),
    },
  ),
  bars(
    {
      id: 'he-ciphertext',
      title: 'Lattice layer: ciphertext size',
      pretzel: 'microbenchmarks',
      about: 'Bytes of one ciphertext the client sends to the provider.',
      log: true,
    },
    {
      suite: 'he',
      cases: /^(lwe_bytes_T\d+|nodeseal_ct_bytes)$/,
      unit: 'B',
      label: (c) => (c.startsWith('nodeseal') ? 'ciphertext' : caseLabel(c.replace('lwe_bytes_', 'ciphertext_'))),
      series: peer('nodeseal_', 'node-seal (peer)'),
    },
  ),
  bars(
    {
      id: 'search-time',
      title: 'Keyword search: query and update time',
      pretzel: 'Fig. 15',
      about: 'Local search index over a 40K-message mailbox, encrypted at rest. Pretzel’s index was plaintext.',
    },
    {
      suite: 'search',
      cases: /^(query\w*|update)_40k$/,
      unit: 'ms',
      label: (c) => c.replace(/_40k$/, '').replace(/_/g, ' '),
    },
  ),
  bars(
    {
      id: 'search-size',
      title: 'Keyword search: index size',
      pretzel: 'Fig. 15',
      about: 'Bytes of the search index and of the encrypted store for a 40K-message mailbox.',
    },
    {
      suite: 'search',
      cases: /^(index|store)_bytes_40k$/,
      unit: 'MB',
      scale: MB,
      label: (c) => c.replace(/_bytes_40k$/, ''),
    },
  ),
];

/** What Pretzel plots that no bench row measures yet, so the report can say so. */
export const NOT_BENCHED = [
  'Topics: provider CPU for other B and B′ than B = 2048, B′ = 20 (Pretzel Fig. 10)',
  'Keyword search at other mailbox sizes than 40K messages (Pretzel Fig. 15)',
];
