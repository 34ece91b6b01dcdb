/** Okabe-Ito: distinguishable with the common colour-vision deficiencies. Target i always gets colour i. */
const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#999999', '#000000'];
export const colorFor = (i: number) => PALETTE[i % PALETTE.length]!;

/** Event colours, apart from the target palette. */
const EVENT_COLORS: Record<string, string> = {
  drop: '#7f7f7f',
  flaky: '#b8860b',
  blackhole: '#222222',
  partition: '#c62828',
  'slow-consumer': '#6a1b9a',
  reset: '#ad1457',
  cutoff: '#4e342e',
  restart: '#d32f2f',
};
export const eventColor = (kind: string) => EVENT_COLORS[kind] ?? '#555555';

/**
 * Put several (x, y) tables on one shared, sorted x axis (uPlot's data model), with null where a
 * table has no point. Series are drawn with spanGaps so each keeps its own line.
 */
export function alignTables(tables: readonly { x: readonly number[]; y: readonly (number | null)[] }[]): { x: number[]; ys: (number | null)[][] } {
  const xs = [...new Set(tables.flatMap((t) => t.x))].sort((a, b) => a - b);
  const pos = new Map(xs.map((v, i) => [v, i]));
  const ys = tables.map((t) => {
    const row: (number | null)[] = new Array(xs.length).fill(null);
    t.x.forEach((v, i) => (row[pos.get(v)!] = t.y[i] ?? null));
    return row;
  });
  return { x: xs, ys };
}

/** The figures' formats on every page and table: whole numbers with thousands separators, durations in ms or s. */
export const fmtInt = (v: number) => v.toLocaleString('en-US');
export const fmtMs = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`);

export const round = (v: number, digits = 3) => Math.round(v * 10 ** digits) / 10 ** digits;

/** Chart ids are DOM ids: keep them to [a-z0-9-]. */
export const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
