import type { CurvePoint } from '../../measure/disruptions.ts';
import type { ChartSpec } from '../types.ts';
import { alignTables, colorFor, round } from './common.ts';

/** Dash patterns tell disruption kinds apart when a plan combines several; colour stays the target's. */
const DASHES: number[][] = [[], [6, 3], [2, 3], [10, 3, 2, 3]];

/** One target's (or run's) line for one disruption kind: its label, and its index, which picks the colour. */
type KindRow = { label: string; index: number; kind: string };

/** Each row's line: its target's colour; with several disruption kinds on one chart, the kind's dash and name too. */
function kindLines(rows: readonly KindRow[]) {
  const kinds = [...new Set(rows.map((r) => r.kind))];
  return (r: KindRow) => ({ label: kinds.length > 1 ? `${r.label} (${r.kind})` : r.label, color: colorFor(r.index), width: 2, dash: DASHES[kinds.indexOf(r.kind) % DASHES.length]!, spanGaps: true });
}

export interface RecoveryCdfInput extends KindRow {
  /** Clients subscribed again after a disruption, and clients that lost the connection and never were. */
  recovered: number;
  unrecovered: number;
  /** p0..p100 of recovery times, ms (RunSeries.recovery). */
  quantilesMs: readonly number[];
}

/**
 * Recovery-time CDF: x seconds from a disruption's start, y % of the clients that lost their
 * connection which were subscribed again by then. Clients that never came back keep the curve
 * below 100%, so "late" is a curve to the right and "never" a curve that stops short.
 */
export function recoveryCdfChart(inputs: readonly RecoveryCdfInput[]): ChartSpec | null {
  const rows = inputs.filter((r) => r.recovered + r.unrecovered > 0);
  if (rows.length === 0) return null;
  const line = kindLines(rows);
  const tables = rows.map((r) => {
    const share = r.recovered / (r.recovered + r.unrecovered);
    const byX = new Map<number, number>();
    r.quantilesMs.forEach((ms, p) => byX.set(round(ms / 1000), round(p * share, 2)));
    if (r.recovered === 0) byX.set(0, 0);
    const x = [...byX.keys()].sort((a, b) => a - b);
    return { x, y: x.map((v) => byX.get(v)!) };
  });
  const t = alignTables(tables);
  return {
    id: 'recovery-cdf',
    title: 'Recovery time CDF',
    note: 'How long clients that lost their connection took to be subscribed again. Further right = came back later; a line ending below 100% = some never came back.',
    xLabel: 'seconds from the disruption to subscribed again',
    yLabel: '% of disconnected clients back',
    yRange: [0, 100],
    x: t.x,
    series: rows.map((r, i) => ({ ...line(r), values: t.ys[i]!, reduce: 'min' as const })),
  };
}

export interface RecoveryCurveInput extends KindRow {
  curve: readonly CurvePoint[];
}

/**
 * Recovery curves: every message placed by publish time relative to each disruption's start,
 * for the clients that disruption hit. Delivery shows what was lost around a disruption,
 * latency what came late.
 */
export function recoveryCurveCharts(inputs: readonly RecoveryCurveInput[]): ChartSpec[] {
  const rows = inputs.filter((r) => r.curve.length > 0);
  if (rows.length === 0) return [];
  const line = kindLines(rows);
  const delivered = alignTables(rows.map((r) => ({ x: r.curve.map((p) => p.tSec), y: r.curve.map((p) => p.deliveredPct) })));
  const latency = alignTables(rows.map((r) => ({ x: r.curve.map((p) => p.tSec), y: r.curve.map((p) => p.latencyP95Ms) })));
  const disruptionAt = [{ x: 0, label: 'disruption starts', color: '#c62828' }];
  return [
    {
      id: 'recovery-delivery',
      title: 'Recovery curve: delivery around each disruption',
      note: 'Messages by publish time relative to each disruption, for the clients it hit. A target that replays stays at 100%; a gap after 0 s is what the offline window cost.',
      xLabel: 'seconds since the disruption began (by publish time)',
      yLabel: '% delivered to affected clients',
      yRange: [0, 100],
      x: delivered.x,
      series: rows.map((r, i) => ({ ...line(r), values: delivered.ys[i]!, reduce: 'min' as const })),
      markers: disruptionAt,
    },
    {
      id: 'recovery-latency',
      title: 'Recovery curve: latency around each disruption',
      note: 'p95 latency of the messages those clients did get. A hump after 0 s is messages replayed late; no line where nothing arrived.',
      xLabel: 'seconds since the disruption began (by publish time)',
      yLabel: 'p95 latency (ms)',
      x: latency.x,
      series: rows.map((r, i) => ({ ...line(r), values: latency.ys[i]!, reduce: 'max' as const })),
      markers: disruptionAt,
    },
  ];
}
