// The report page: plain static HTML with relative links to the figure SVGs
// and CSVs, so it opens from disk with no network.
import { ACCURACY_COLUMNS, type AccuracyLine } from './accuracy.js';
import type { Figure, Point } from './figures.js';
import type { Machine } from './machine.js';

export interface Rendered {
  figure: Figure;
  points: Point[];
}

export interface PageInput {
  machine: Machine;
  /** How the rows were obtained, in a sentence. */
  origin: string;
  failedSuites: string[];
  figures: Rendered[];
  missing: string[];
  accuracy: AccuracyLine[];
}

const escape = (s: string) =>
  s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] ?? c);

function figureHtml({ figure: f, points }: Rendered): string {
  const rows = [...new Set(points.filter((p) => !p.source.startsWith('Pretzel')).map((p) => p.source))];
  const peers = [...new Set(points.map((p) => p.series).filter((s) => s.includes('(peer)') || s.includes('baseline')))];
  // Many bars need the page's full width to stay readable.
  const wide = f.kind === 'bars' && points.length > 8;
  return `<figure id="${f.id}"${wide ? ' class="wide"' : ''}>
  <h3>${escape(f.title)}</h3>
  <img src="figures/${f.id}.svg" alt="${escape(f.title)}">
  <figcaption>
    <p>${escape(f.about)}</p>
    <p class="source">Pretzel: ${escape(f.pretzel)}${peers.length ? ` · compared with: ${escape(peers.join(', '))}` : ''} ·
      bench rows: ${rows.map((r) => `<code>${escape(r)}</code>`).join(', ')} ·
      <a href="figures/${f.id}.csv">data (CSV)</a></p>
  </figcaption>
</figure>`;
}

function accuracyHtml(lines: AccuracyLine[]): string {
  if (!lines.length) return '';
  const head = ACCURACY_COLUMNS.map((c) => `<th>${escape(c)}</th>`).join('');
  const body = lines
    .map((l) => `<tr>${ACCURACY_COLUMNS.map((c) => `<td>${escape(String(l[c]))}</td>`).join('')}</tr>`)
    .join('\n');
  return `<section id="accuracy-table">
<h2>Accuracy per algorithm and corpus</h2>
<p>Held-out test sets. Accuracy, precision and recall are those of the quantized model, which is what the private
protocol computes; the last column is the share of test documents where the float and quantized models disagree.
<a href="figures/accuracy-table.csv">data (CSV)</a></p>
<table><thead><tr>${head}</tr></thead><tbody>
${body}
</tbody></table>
</section>`;
}

export function pageHtml(p: PageInput): string {
  const m = p.machine;
  const machine: [string, string][] = [
    ['built', m.date],
    ['processor', m.cpu],
    ['memory', m.memory],
    ['system', m.os],
    ['Node', m.node],
    ['commit', m.commit],
    ['libraries', m.libraries],
  ];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Private mail functions: evaluation report</title>
<style>
  body { font: 15px/1.5 system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #1f2328; }
  table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
  th, td { text-align: left; padding: 0.2em 0.8em; border-bottom: 1px solid #d0d7de; }
  .figures { display: flex; flex-wrap: wrap; gap: 1.5em; }
  figure { margin: 0; flex: 1 1 460px; border: 1px solid #d0d7de; border-radius: 6px; padding: 0.8em; }
  figure.wide { flex-basis: 100%; }
  figure h3 { margin: 0 0 0.4em; font-size: 1.05em; }
  figure img { max-width: 100%; }
  .source { color: #57606a; font-size: 0.9em; }
  code { font-size: 0.9em; }
</style>
</head>
<body>
<h1>Private mail functions: evaluation report</h1>
<p>This project’s measurements beside the numbers Pretzel (SIGCOMM 2017) published. Each figure names the bench row
it plots and the figure of the Pretzel paper it corresponds to, and links its data as CSV. Pretzel ran on different
hardware, so compare the shape and the order of magnitude rather than the last digit.</p>
<p>${escape(p.origin)}</p>
${p.failedSuites.length ? `<p><strong>These bench suites failed, so their figures may be incomplete:</strong> ${escape(p.failedSuites.join(', '))}.</p>` : ''}
<h2>Machine</h2>
<table>${machine.map(([k, v]) => `<tr><th>${k}</th><td>${escape(v)}</td></tr>`).join('')}</table>
<h2>Figures</h2>
<div class="figures">
${p.figures.map(figureHtml).join('\n')}
</div>
${accuracyHtml(p.accuracy)}
<section id="not-measured">
<h2>Not measured yet</h2>
<ul>${p.missing.map((s) => `<li>${escape(s)}</li>`).join('')}</ul>
</section>
</body>
</html>
`;
}
