import type { EncodedLatency } from '../core/latency.ts';
import type { MultiShardReport } from '../../shards/coordinator/run.ts';
import { barChart } from './charts/bars.ts';
import { latencyCdfCharts } from './charts/latency.ts';
import type { ChartSpec, ReportMeta, ReportModel, Section } from './types.ts';
import { bannerFlags } from './validity.ts';

/** The coordinator's merged JSON, tagged for the report registry (it names its test `testType`). */
export type MultiShardInput = MultiShardReport & { test: 'multi-shard' };

const n = (v: unknown) => (typeof v === 'number' ? v.toLocaleString('en-US') : 'n/a');

/**
 * A fleet run: each shard's count and p99 side by side (one bad shard stands out), the merged
 * latency CDF from the exact union of the shards' histograms, and clock offsets in shared-stream mode.
 */
export function multiShardReport(results: readonly MultiShardInput[], meta: ReportMeta): ReportModel {
  const r = results[0]!;
  const m = r.merged;
  const idle = r.testType === 'idle';
  const ps = r.perShard;
  const counts = barChart({
    id: 'shard-counts',
    title: idle ? 'Connections per shard' : 'Deliveries per shard',
    note: idle ? 'Clients each shard connected. A shard far below the others hit its own limit or a bad path.' : 'Deliveries each shard received. A shard far below the others lost messages or clients.',
    yLabel: idle ? 'clients connected' : 'deliveries received',
    items: ps.map((s) => ({ label: `${s.name} (${s.status})`, value: idle ? s.connected : s.receivedDeliveries })),
  });
  const p99 = barChart({ id: 'shard-p99', title: 'Latency p99 per shard', note: 'Each shard\'s raw p99 (ms), clock-corrected in shared-stream mode. An outlier is flagged SHARD_LATENCY_OUTLIER.', yLabel: 'p99 latency (ms)', items: ps.map((s) => ({ label: s.name, value: s.latency ? s.latency.p99 : null })) });
  const hist = m.latencyHistogram as EncodedLatency | undefined;
  const merged = hist ? latencyCdfCharts([{ label: `merged (${ps.filter((s) => s.status === 'done').length} shards)`, latency: hist }], 'merged-latency') : [];
  const offsets = r.clock ? barChart({ id: 'clock-offsets', title: 'Shard clock offsets', note: `Each shard's clock minus the coordinator's (ms), measured before and after the run; the largest uncertainty was ±${r.clock.maxUncertaintyMs} ms. Shared-stream latencies are corrected by these offsets.`, yLabel: 'offset (ms)', items: r.clock.offsets.map((o) => ({ label: `${o.name} ±${o.uncertaintyMs}`, value: o.offsetMs })) }) : null;
  const section: Section = {
    title: 'Shards and their union',
    charts: [counts, p99, ...merged, offsets].filter((c): c is ChartSpec => c !== null),
    omitted: [
      ...(p99 ? [] : ['Latency per shard: no shard recorded a delivery latency.']),
      ...(merged.length ? [] : ['Merged latency CDF: no latency histogram in the merged result.']),
      ...(r.clock ? [] : ['Clock offsets: own-stream mode, no clock exchange (each shard timed its own messages).']),
    ],
  };
  const lost = typeof m.lostDeliveries === 'number' ? m.lostDeliveries : 0;
  const failed = ps.filter((s) => s.status !== 'done');
  return {
    title: `Multi-shard ${r.testType}: ${r.target} over ${r.shards} shards`,
    subtitle: `${r.mode}, ${r.perShardN ?? 'default'} clients per shard, started ${r.startedAt}; exit ${r.exitCode} (${r.exitReason})`,
    command: meta.command,
    seed: null,
    generatedAt: new Date().toISOString(),
    flags: bannerFlags('fleet', r.validity.flags),
    verdicts: [{ target: 'fleet', level: r.exitCode === 0 ? 'good' : 'lost', words: r.exitCode === 0 ? 'Every shard done, nothing lost' : failed.length ? 'Shards failed' : lost ? 'Lost messages' : 'Not clean', detail: r.exitReason }],
    summary: [
      ['shard', 'status', 'clients', 'connected', 'received', 'lost', 'p99 ms', 'skew ms', 'flags'],
      ...ps.map((s) => [s.name, s.status, n(s.clients), n(s.connected), n(s.receivedDeliveries), n(s.lostDeliveries), n(s.latency?.p99), n(s.skewEstimateMs), s.flags.join(' ') || s.error || '']),
      ['merged', r.exitReason, n(m.clients), n(m.connectedClients ?? m.connected ?? m.subscribed), n(m.receivedDeliveries), n(m.lostDeliveries), n((m.latencyRawMs as { p99?: number } | undefined)?.p99), '', r.validity.flags.map((f) => f.code).join(' ')],
    ],
    sections: [section],
  };
}
