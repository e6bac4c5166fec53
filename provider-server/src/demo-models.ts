// The bundled models are a demo: trained on public corpora (SpamAssassin,
// 20 Newsgroups), they have never seen a provider's own mail, and a spam
// model's threshold holds its false-positive rate only on mail like the
// mail it was tuned on. A provider serving one outside the demo (`demo` in
// the configuration, PMF_DEMO=1, which `npm run demo` sets) is told at start
// in its log and on /healthz, until it trains its own (models/README.md).
import fs from 'node:fs';
import { loadPlainModel, trainedOnPublicCorpora } from '../../models/plain/index.js';
import type { ModelSource } from './config.js';

/** One warning per configured model trained on public corpora only. */
export function demoModelWarnings(models: readonly ModelSource[]): string[] {
  return models.flatMap((m) => {
    const model = loadPlainModel(new Uint8Array(fs.readFileSync(m.file)));
    model.weights.fill(0);
    model.floatWeights?.fill(0);
    if (!trainedOnPublicCorpora(model.header)) return [];
    const source = (model.header.trainedOn as { source: string }).source;
    return [
      `model ${m.id} is a demo model, trained only on the public corpus ${source}: it has not seen your users' mail` +
        (model.header.task === 'spam' ? ' and its false-positive rate holds only on mail like that corpus' : '') +
        `. Train one on your own mail before serving real users (models/README.md, "Train on your own mail")`,
    ];
  });
}
