// Turns a figure's points into a Vega-Lite spec, an SVG (rendered headless by
// vega, no browser) and a CSV of the same points.
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { OURS, PRETZEL, type Figure, type Point } from './figures.js';

// Fixed colours across figures: this project blue, Pretzel orange, peers and baselines other hues.
const OURS_COLORS = ['#1f6feb', '#79b8ff'];
const PEER_COLORS = ['#6e7781', '#2da44e', '#8250df', '#cf222e'];

/** Series in legend order (ours, Pretzel, the rest) and the colour of each. */
function seriesColors(points: Point[]): { domain: string[]; range: string[] } {
  const names = [...new Set(points.map((p) => p.series))];
  const ours = names.filter((s) => s.startsWith(OURS));
  const others = names.filter((s) => !s.startsWith(OURS) && s !== PRETZEL);
  const pretzel = names.includes(PRETZEL) ? [PRETZEL] : [];
  return {
    domain: [...ours, ...pretzel, ...others],
    range: [
      ...ours.map((_, i) => OURS_COLORS[i % OURS_COLORS.length]),
      ...pretzel.map(() => '#d4731c'),
      ...others.map((_, i) => PEER_COLORS[i % PEER_COLORS.length]),
    ],
  };
}

export function vegaLiteSpec(fig: Figure, points: Point[]): TopLevelSpec {
  const { domain, range } = seriesColors(points);
  const color = {
    field: 'series',
    type: 'nominal',
    title: null,
    scale: { domain, range },
    legend: { orient: 'bottom', direction: 'vertical', labelLimit: 400 },
  } as const;
  const y = {
    field: 'value',
    type: 'quantitative',
    title: fig.unit,
    scale: fig.log ? { type: 'log' as const } : { zero: true },
    stack: null,
  } as const;
  const tooltip = [{ field: 'series' }, { field: 'value', format: ',.4~r' }, { field: 'source' }, { field: 'note' }];
  const common = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    background: 'white',
    padding: 8,
    data: { values: points },
  } as const;
  if (fig.kind === 'lines')
    return {
      ...common,
      width: 420,
      height: 240,
      mark: { type: 'line', point: true },
      encoding: { x: { field: 'x', type: 'quantitative', title: fig.xTitle }, y, color, tooltip },
    };
  const labels = new Set(points.map((p) => p.label)).size;
  return {
    ...common,
    // With xOffset the step is one bar's; keep each label's group at least 110 px wide.
    width: { step: Math.max(26, 110 / domain.length) },
    height: 240,
    encoding: {
      x: {
        field: 'label',
        type: 'nominal',
        title: null,
        sort: null,
        axis: labels > 3 ? { labelAngle: -30, labelLimit: 200 } : { labelAngle: 0, labelLimit: 200 },
      },
      xOffset: { field: 'series', scale: { domain } },
      y,
    },
    layer: [
      // On a log axis a bar has no zero to start from: start it at the bottom of the plot.
      { mark: 'bar', encoding: { color, tooltip, ...(fig.log ? { y2: { value: 240 } } : {}) } },
      {
        mark: { type: 'text', dy: -6, fontSize: 10 },
        encoding: { text: { field: 'value', type: 'quantitative', format: ',.3~r' } },
      },
    ],
  };
}

export async function toSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

export const POINT_COLUMNS = ['label', 'x', 'series', 'value', 'unit', 'source', 'note'];

function csvField(v: unknown): string {
  const s = v === undefined ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export function toCsv(columns: string[], records: object[]): string {
  const cell = (r: object, c: string) => csvField((r as Record<string, unknown>)[c]);
  return `${[columns.join(','), ...records.map((r) => columns.map((c) => cell(r, c)).join(','))].join('\n')}\n`;
}
