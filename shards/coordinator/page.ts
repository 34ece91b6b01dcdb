import type { EncodedLatency } from '../../engine/measure/latency.ts';
import type { MultiShardReport } from './run.ts';
import { barChart } from '../../engine/pages/charts/bars.ts';
import { latencyCdfCharts } from '../../engine/pages/charts/latency.ts';
import { lossInputOf, lossSections } from '../../engine/pages/loss.ts';
import type { ChartSpec, ReportMeta, ReportModel, Section } from '../../engine/pages/types.ts';
import type { PageSource } from '../../engine/pages/index.ts';
import { bannerFlags, reportHead } from '../../engine/pages/validity.ts';

/** The coordinator's merged JSON, tagged for the renderer's page lookup (it names its test `testType`). */
export type MultiShardInput = MultiShardReport & { test: 'multi-shard' };

const n = (v: unknown) => (typeof v === 'number' ? v.toLocaleString('en-US') : 'n/a');

/**
 * A fleet run: each shard's count and p99 side by side (one bad shard stands out), the merged
 * latency CDF from the exact union of the shards' histograms, and clock offsets in shared-stream mode.
 */
export function multiShardReport(results: readonly MultiShardInput[], meta: ReportMeta): ReportModel {
  const r = results[0]!;
  if (r.testType === 'idle') return idleFleetReport(r, meta);
  const m = r.merged;
  const ps = r.perShard;
  const counts = barChart({
    id: 'shard-counts',
    title: 'Deliveries per shard',
    note: 'Deliveries each shard received. A shard far below the others lost messages or clients.',
    yLabel: 'deliveries received',
    items: ps.map((s) => ({ label: `${s.name} (${s.status})`, value: s.receivedDeliveries })),
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
    ...reportHead(meta, null, bannerFlags('fleet', r.validity.flags)),
    verdicts: [{ target: 'fleet', level: r.exitCode === 0 ? 'good' : 'lost', words: r.exitCode === 0 ? 'Every shard done, nothing lost' : failed.length ? 'Shards failed' : lost ? 'Lost messages' : 'Not clean', detail: r.exitReason }],
    summary: [
      ['shard', 'status', 'clients', 'connected', 'received', 'lost', 'p99 ms', 'skew ms', 'flags'],
      ...ps.map((s) => [s.name, s.status, n(s.clients), n(s.connected), n(s.receivedDeliveries), n(s.lostDeliveries), n(s.latency?.p99), n(s.skewEstimateMs), s.flags.join(' ') || s.error || '']),
      ['merged', r.exitReason, n(m.clients), n(m.connectedClients ?? m.connected ?? m.subscribed), n(m.receivedDeliveries), n(m.lostDeliveries), n((m.latencyRawMs as { p99?: number } | undefined)?.p99), '', r.validity.flags.map((f) => f.code).join(' ')],
    ],
    // The merged result's causes (the shards' summed by runners/jitter/merge.ts), when it has them.
    sections: [section, ...lossSections([lossInputOf(`merged (${ps.filter((s) => s.status === 'done').length} shards)`, m)])],
  };
}

const causes = (c: Record<string, number> | null | undefined) => (c && Object.keys(c).length ? Object.entries(c).map(([k, v]) => `${k} x${v}`).join(', ') : '');

/**
 * An idle fleet holds connections: no deliveries, no latency. Each shard's asked-for and
 * subscribed counts side by side (named shards, not bar numbers), and the fleet's figures (the
 * summed counts, the target's bytes per connection over every shard's subscribed) in the table
 * next to each shard's own, the columns the coordinator's text table prints.
 */
function idleFleetReport(r: MultiShardInput, meta: ReportMeta): ReportModel {
  const m = r.merged as Record<string, unknown> & { failureCauses?: Record<string, number> };
  const ps = r.perShard;
  const x = [0, ...ps.map((_, k) => k + 1), ps.length + 1];
  const pad = (vs: (number | null)[]) => [null, ...vs, null];
  const asked = ps.map((s) => s.clients);
  const connected = ps.map((s) => s.connected);
  const top = Math.max(1, ...asked.map((v) => v ?? 0), ...connected.map((v) => v ?? 0)) * 1.15;
  const counts: ChartSpec = {
    id: 'shard-counts',
    title: 'Connections per shard: asked for and subscribed',
    note: `Bars: clients each shard subscribed; dots: clients it was asked for. Fleet: ${n(m.subscribed)} of ${n(m.clients)} subscribed${typeof m.failed === 'number' && m.failed > 0 ? `, ${n(m.failed)} failed` : ''}. A shard short of its dot hit its own limit or a bad path.`,
    xLabel: ps.map((s, k) => `${k + 1} = ${s.name} (${s.status})`).join(', '),
    xIntegers: true,
    yLabel: 'clients',
    yRange: [0, top],
    x,
    series: [
      { label: 'subscribed', values: pad(connected), color: '#0072B2', bars: true, reduce: 'max' },
      { label: 'asked for', values: pad(asked), color: '#D55E00', points: true, width: 0, reduce: 'max' },
    ],
  };
  const fleetBytes = typeof m.targetBytesPerConnection === 'number' ? m.targetBytesPerConnection : null;
  const bytes = barChart({
    id: 'shard-target-bytes',
    title: 'Target bytes per connection: each shard\'s view and the fleet figure',
    note: 'Each shard samples the whole target but divides by its own subscribed clients; the fleet figure divides the target\'s growth by every shard\'s subscribed, the one to quote.',
    yLabel: 'bytes per connection',
    items: [...ps.map((s) => ({ label: s.name, value: s.targetBytesPerConnection ?? null })), { label: 'fleet', value: fleetBytes, color: '#333333' }],
  });
  const failed = ps.filter((s) => s.status !== 'done');
  const cell = (v: unknown) => (typeof v === 'number' ? v.toLocaleString('en-US') : v === null || v === undefined ? '-' : String(v));
  return {
    title: `Multi-shard idle: ${r.target} over ${r.shards} shards`,
    subtitle: `${r.perShardN ?? 'default'} clients per shard, started ${r.startedAt}; exit ${r.exitCode} (${r.exitReason})`,
    ...reportHead(meta, null, bannerFlags('fleet', r.validity.flags)),
    verdicts: [{ target: 'fleet', level: r.exitCode === 0 ? 'good' : 'lost', words: r.exitCode === 0 ? 'Every shard done, every client subscribed' : failed.length ? 'Shards failed' : 'Connections failed', detail: r.exitReason }],
    summary: [
      ['shard', 'status', 'clients', 'subscribed', 'target B/conn', 'runner B/client', 'failure causes', 'notes'],
      ...ps.map((s) => [s.name, s.status, cell(s.clients), cell(s.connected), cell(s.targetBytesPerConnection), cell(s.runnerRssPerClientBytes), causes(s.failureCauses), s.error ?? s.flags.join(' ')]),
      ['fleet (merged)', r.validity.valid ? 'valid' : 'INVALID', cell(m.clients), cell(m.subscribed), cell(m.targetBytesPerConnection), cell(m.runnerRssPerClientBytes), causes(m.failureCauses), r.validity.flags.map((f) => f.code).join(' ')],
    ],
    sections: [{ title: 'Shards and the fleet', intro: 'Idle holds connections open: there are no deliveries or latencies to show.', charts: [counts, bytes].filter((c): c is ChartSpec => c !== null), omitted: bytes ? [] : ['Target bytes per connection: no shard sampled the target\'s memory.'] }],
  };
}

/** The coordinator's own page, for the renderer: its merged JSON is passed tagged `test: 'multi-shard'`. */
export const COORDINATOR_PAGES: PageSource = [{ name: 'multi-shard', page: multiShardReport }];
