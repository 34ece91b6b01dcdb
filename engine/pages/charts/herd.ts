import type { ChartSpec } from '../types.ts';
import { alignTables, colorFor, round } from './common.ts';

/**
 * Input shape for the avalanche (thundering herd) runner, which lands later: after a mass
 * disconnect at t = 0, how many clients were reconnected by each sample time. One entry per
 * target (or shard-merged run). `tMs` increasing; `reconnected[i]` is a count at `tMs[i]`.
 */
export interface HerdInput {
  label: string;
  /** Clients that were disconnected at t = 0 (the 100% line). */
  clients: number;
  tMs: readonly number[];
  reconnected: readonly number[];
  /** Optional: when the server was back up after a restart, ms after the disconnect. */
  serverUpAtMs?: number;
}

/** Reconnected % over time since the mass disconnect, one line per target: steeper and further left is better. */
export function herdChart(inputs: readonly HerdInput[]): ChartSpec | null {
  const rows = inputs.filter((h) => h.tMs.length > 0 && h.clients > 0);
  if (rows.length === 0) return null;
  const t = alignTables(rows.map((h) => ({ x: h.tMs.map((v) => round(v / 1000)), y: h.reconnected.map((n) => round((n / h.clients) * 100, 2)) })));
  const markers = rows.flatMap((h) => (h.serverUpAtMs !== undefined ? [{ x: h.serverUpAtMs / 1000, label: `${h.label}: server up`, color: colorFor(inputs.indexOf(h)) }] : []));
  return {
    id: 'herd',
    title: 'Reconnect herd: clients back after a mass disconnect',
    note: 'Share of disconnected clients reconnected over time. A line that rises late or flattens below 100% is a herd the target could not absorb.',
    xLabel: 'seconds since the mass disconnect',
    yLabel: '% of clients reconnected',
    yRange: [0, 100],
    x: t.x,
    series: rows.map((h, i) => ({ label: h.label, values: t.ys[i]!, color: colorFor(inputs.indexOf(h)), width: 2, spanGaps: true, reduce: 'min' as const })),
    markers: [{ x: 0, label: 'mass disconnect', color: '#c62828' }, ...markers],
  };
}
