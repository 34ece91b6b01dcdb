import type { MultiShardReport } from './run.ts';
import { safeText } from '../../lib/escape.ts';

const cell = (v: unknown) => (v === null || v === undefined ? '-' : safeText(String(v)));

/** Terminal summary: one row per shard, the merged row, then flags and the verdict. */
export function formatReport(r: MultiShardReport): string {
  if (r.testType === 'idle') return formatIdle(r);
  const rows = r.perShard.map((s) => [s.name, s.status, cell(s.connected), cell(s.deliveryRatePct), cell(s.latency?.p50), cell(s.latency?.p99), cell(s.skewEstimateMs), s.clock ? `${s.clock.offsetMs}±${s.clock.uncertaintyMs}` : '-', cell(s.error ?? s.flags.join(' '))]);
  const m = r.merged as Record<string, unknown> & { latencyRawMs?: { p50: number; p99: number } };
  rows.push(['merged', r.validity.valid ? 'valid' : 'INVALID', cell(m.connectedClients ?? m.subscribed ?? m.connected), cell(m.deliveryRatePct), cell(m.latencyRawMs?.p50), cell(m.latencyRawMs?.p99), cell(m.skewFloor), r.clock ? `max ±${r.clock.maxUncertaintyMs}` : '-', '']);
  const head = ['shard', 'status', 'connected', 'delivery%', 'p50 ms', 'p99 ms', 'skew ms', 'clock ms', 'notes'];
  return table(r, `${r.testType} on ${r.target} over ${r.shards} shards (${r.mode}${r.perShardN ? `, ${r.perShardN} clients each` : ''})`, head, rows);
}

const causes = (c: Record<string, number> | null | undefined) => (c && Object.keys(c).length ? Object.entries(c).map(([k, n]) => `${k}:${n}`).join(',') : '-');

/** Idle: the columns that mean something for held connections (no delivery or latency). */
function formatIdle(r: MultiShardReport): string {
  const m = r.merged as Record<string, unknown> & { failureCauses?: Record<string, number> };
  const rows = r.perShard.map((s) => [s.name, s.status, cell(s.clients), cell(s.connected), cell(s.targetBytesPerConnection), cell(s.runnerRssPerClientBytes), causes(s.failureCauses), cell(s.error ?? s.flags.join(' '))]);
  // An understated target figure is marked in its own cell, not only in the flags below.
  const tm = m.targetMemory as { complete?: unknown } | undefined;
  const target = tm?.complete === false && m.targetBytesPerConnection !== null && m.targetBytesPerConnection !== undefined ? `${cell(m.targetBytesPerConnection)} (incomplete)` : cell(m.targetBytesPerConnection);
  const notes = [m.uniformShardCeiling ? 'UNIFORM_SHARD_CEILING' : '', tm?.complete === false ? 'FLEET_TARGET_MEMORY_INCOMPLETE' : ''].filter(Boolean).join(' ');
  rows.push(['merged', r.validity.valid ? 'valid' : 'INVALID', cell(m.clients), cell(m.subscribed), target, cell(m.runnerRssPerClientBytes), causes(m.failureCauses), notes]);
  const head = ['shard', 'status', 'clients', 'subscribed', 'target B/conn', 'runner B/client', 'failure causes', 'notes'];
  return table(r, `idle on ${r.target} over ${r.shards} shards${r.perShardN ? ` (${r.perShardN} clients each)` : ''}`, head, rows);
}

/** The title, the aligned table (the last column unpadded), then the flags and the exit line. */
function table(r: MultiShardReport, title: string, head: string[], rows: string[][]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const fmt = (row: string[]) => row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  const lines = [title, fmt(head), ...rows.map(fmt)];
  for (const f of r.validity.flags) lines.push(safeText(`${f.severity.toUpperCase()} ${f.code}: ${f.message}`));
  lines.push(safeText(`exit ${r.exitCode}: ${r.exitReason}`));
  return lines.join('\n') + '\n';
}
