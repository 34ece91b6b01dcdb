import { LOSS_CAUSE_LABELS, LOSS_CAUSES, outcomeLabel, type LossCause } from '../measure/loss-causes.ts';
import type { LossSummary } from '../session/results.ts';
import { barChart } from './charts/bars.ts';
import { fmtInt, fmtMs } from './charts/common.ts';
import type { ChartSpec, Section, StackSpec, TableSpec } from './types.ts';

/**
 * "Lost by cause" and "Resume outcomes" for any runner's report: the one renderer every report
 * builder (jitter, avalanche, deploy-impact, soak, latency, throughput, whispers, the comparison
 * pages) calls with its results. It reads the fields engine/measure/client-timelines.ts puts on a
 * result (`lossByCause`, `resumeOutcomes`, `replayedDeliveries`, `lateDeliveries`), whatever
 * the runner; a result written before those fields existed gets "n/a" cells, and a page none of
 * whose results has them gets no such section at all.
 */
export interface LossInput extends LossSummary {
  /** The target's column label. */
  label: string;
  lostDeliveries: number;
}

/** A result's loss fields, read structurally (every runner's result names them alike). */
export function lossInputOf(label: string, r: unknown): LossInput {
  const o = (r ?? {}) as Partial<LossInput> & { lostDeliveries?: unknown };
  return {
    label,
    // A result that keeps its causes apart from its totals: the causes sum to the loss by construction.
    lostDeliveries: typeof o.lostDeliveries === 'number' ? o.lostDeliveries : Object.values(o.lossByCause ?? {}).reduce((a, b) => a + (b ?? 0), 0),
    ...(o.lossByCause ? { lossByCause: o.lossByCause } : {}),
    ...(o.resumeOutcomes ? { resumeOutcomes: o.resumeOutcomes } : {}),
    ...(typeof o.replayedDeliveries === 'number' ? { replayedDeliveries: o.replayedDeliveries } : {}),
    ...(o.lateDeliveries ? { lateDeliveries: o.lateDeliveries } : {}),
  };
}

/**
 * One colour per cause on every page (not per position), so "history evicted" is the same orange
 * on the jitter page and the avalanche page. Okabe-Ito first (colour-vision safe), then distinct
 * darker tones for the rarer causes.
 */
const CAUSE_COLORS: Readonly<Record<LossCause, string>> = {
  lost_while_connected: '#D55E00',
  offline_nothing_to_resume: '#999999',
  session_expired: '#CC79A7',
  history_evicted: '#E69F00',
  epoch_changed: '#56B4E9',
  no_offset: '#F0E442',
  server_restarted: '#0072B2',
  history_rejected: '#009E73',
  too_slow: '#6A1B9A',
  resume_incomplete: '#000000',
  not_back_by_end: '#8C564B',
  before_first_connect: '#7F7F00',
  publisher_side: '#17BECF',
};

const share = (part: number, whole: number) => (whole > 0 ? `${Math.round((part / whole) * 1000) / 10}%` : '0%');

type CauseCounts = Pick<LossInput, 'lossByCause' | 'lostDeliveries'>;

/** Causes that occurred in any input, in the union's order. */
export const causesIn = (inputs: readonly CauseCounts[]) => LOSS_CAUSES.filter((c) => inputs.some((i) => (i.lossByCause?.[c] ?? 0) > 0));

/** One cause's cell of a target's column: count (share of that target's loss); n/a for a result without causes. */
export function causeCell(i: CauseCounts, c: LossCause): string {
  if (!i.lossByCause) return 'n/a';
  const v = i.lossByCause[c] ?? 0;
  return v ? `${fmtInt(v)} (${share(v, i.lostDeliveries)})` : '0';
}

/** The stacked bar of the comparison pages: one bar per target, its lost deliveries stacked by cause. */
export function lossStack(inputs: readonly LossInput[], id = 'lost-by-cause-stack'): StackSpec | null {
  const withCauses = inputs.filter((i) => i.lossByCause);
  if (withCauses.length === 0) return null;
  const causes = causesIn(withCauses);
  return {
    id,
    title: 'Lost by cause, per target',
    note: 'One bar per target, as long as its lost deliveries; each lost (client, message) is booked to one cause from that client\'s own timeline (docs/reports.md, "Lost by cause"). Exact figures in the table beside it.',
    unit: 'lost deliveries',
    bars: withCauses.map((i) => ({
      label: i.label,
      total: i.lostDeliveries,
      segments: causes.filter((c) => (i.lossByCause![c] ?? 0) > 0).map((c) => ({ key: c, label: LOSS_CAUSE_LABELS[c], value: i.lossByCause![c]!, color: CAUSE_COLORS[c] })),
    })),
    legend: causes.map((c) => ({ key: c, label: LOSS_CAUSE_LABELS[c], color: CAUSE_COLORS[c] })),
  };
}

/** Lost deliveries by cause, one column per target: count (share of that target's loss). */
function lossTable(inputs: readonly LossInput[]): TableSpec {
  const causes = causesIn(inputs);
  return {
    id: 'lost-by-cause',
    caption: 'Lost deliveries by cause (share of the target\'s loss)',
    rows: [
      ['cause', ...inputs.map((i) => i.label)],
      ...causes.map((c) => [LOSS_CAUSE_LABELS[c], ...inputs.map((i) => causeCell(i, c))]),
      ['total lost', ...inputs.map((i) => (i.lossByCause ? fmtInt(i.lostDeliveries) : `${fmtInt(i.lostDeliveries)} (no causes in this result)`))],
    ],
  };
}

/** Each reconnect's resume outcome, one column per target; the replayed (not live) first deliveries under it. */
function resumeTable(inputs: readonly LossInput[]): TableSpec {
  const keys = [...new Set(inputs.flatMap((i) => Object.keys(i.resumeOutcomes ?? {})))].sort();
  const rows = [
    ['outcome', ...inputs.map((i) => i.label)],
    ...keys.map((k) => [outcomeLabel(k), ...inputs.map((i) => (i.resumeOutcomes ? fmtInt(i.resumeOutcomes[k] ?? 0) : 'n/a'))]),
    ['reconnects', ...inputs.map((i) => (i.resumeOutcomes ? fmtInt(Object.values(i.resumeOutcomes).reduce((a, b) => a + b, 0)) : 'n/a'))],
  ];
  if (inputs.some((i) => i.replayedDeliveries !== undefined)) rows.push(['deliveries replayed (not live)', ...inputs.map((i) => (i.replayedDeliveries === undefined ? 'n/a' : fmtInt(i.replayedDeliveries)))]);
  return { id: 'resume-outcomes', caption: 'Reconnects by resume outcome', rows };
}

/** Late first deliveries (over the run's live p99), split by the path that brought them. */
function lateTable(inputs: readonly LossInput[]): TableSpec | null {
  if (!inputs.some((i) => i.lateDeliveries && i.lateDeliveries.late > 0)) return null;
  const paths = [...new Set(inputs.flatMap((i) => Object.keys(i.lateDeliveries?.byPath ?? {})))].sort((a, b) => (a === 'live' ? -1 : b === 'live' ? 1 : a.localeCompare(b)));
  return {
    id: 'late-by-path',
    caption: 'Late deliveries (over the live p99), by how they came',
    rows: [
      ['path', ...inputs.map((i) => i.label)],
      ['live p99', ...inputs.map((i) => (i.lateDeliveries ? (i.lateDeliveries.liveP99Ms === null ? 'none live' : fmtMs(i.lateDeliveries.liveP99Ms)) : 'n/a'))],
      ...paths.map((p) => [outcomeLabel(p), ...inputs.map((i) => (i.lateDeliveries ? fmtInt(i.lateDeliveries.byPath[p] ?? 0) : 'n/a'))]),
      ['late in all', ...inputs.map((i) => (i.lateDeliveries ? fmtInt(i.lateDeliveries.late) : 'n/a'))],
    ],
  };
}

/** One target's lost deliveries by cause as bars (the single-target pages). */
function lossBarChart(i: LossInput): ChartSpec | null {
  const by = i.lossByCause;
  if (!by || i.lostDeliveries === 0) return null;
  const items = causesIn([i]).map((c) => ({ label: LOSS_CAUSE_LABELS[c], value: by[c]!, color: CAUSE_COLORS[c] }));
  return barChart({ id: `lost-by-cause-${i.label}`, title: `Lost by cause: ${i.label}`, note: `Each of the ${fmtInt(i.lostDeliveries)} lost deliveries booked to one cause, from the client's own timeline (docs/reports.md, "Lost by cause").`, yLabel: 'lost deliveries', items });
}

/**
 * The sections: "Lost by cause" (one target: its bar chart; several: the stacked bar, one bar per
 * target; then the table of figures and, when any delivery was late, the late table) and "Resume
 * outcomes". None when no input carries the fields (a result from before loss causes).
 */
export function lossSections(inputs: readonly LossInput[]): Section[] {
  if (!inputs.some((i) => i.lossByCause || i.resumeOutcomes)) return [];
  const anyLost = inputs.some((i) => i.lossByCause && i.lostDeliveries > 0);
  const charts = inputs.length === 1 ? [lossBarChart(inputs[0]!)].filter((c): c is ChartSpec => c !== null) : [];
  const stack = inputs.length > 1 && anyLost ? lossStack(inputs) : null;
  const late = lateTable(inputs);
  const out: Section[] = [
    {
      title: 'Lost by cause',
      charts,
      ...(stack ? { stacks: [stack] } : {}),
      tables: [...(anyLost ? [lossTable(inputs)] : []), ...(late ? [late] : [])],
      ...(anyLost ? {} : { omitted: ['Lost by cause: no delivery was lost in this run.'] }),
    },
  ];
  if (inputs.some((i) => i.resumeOutcomes)) {
    const any = inputs.some((i) => Object.keys(i.resumeOutcomes ?? {}).length > 0);
    out.push({ title: 'Resume outcomes', intro: 'What each reconnect\'s resume did: the session restored, the history filled the gap, rejected (and why), or nothing to resume on an at-most-once protocol.', charts: [], tables: any ? [resumeTable(inputs)] : [], ...(any ? {} : { omitted: ['Resume outcomes: no client reconnected in this run.'] }) });
  }
  return out;
}
