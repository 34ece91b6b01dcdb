import { sortedSamples, type EncodedLatency } from '../../../engine/measure/latency.ts';
import { redactBroadcastKey } from './route-target.ts';

/** The benchmark's `label` per route target (its stats.ts); Rebound-only targets keep their name. */
const BENCH_LABEL: Record<string, string> = { anycable: 'anycable', socketio: 'socketio-default', 'socketio-csr': 'socketio-csr', uws: 'uws' };
/** Targets whose resumes are Socket.IO connection-state recovery; AnyCable's are session restores. */
const CSR = new Set(['socketio-csr', 'socketio-csr-redis']);
const SESSION = new Set(['replay', 'anycable', 'replay-redis']);
const round2 = (x: number) => Math.round(x * 100) / 100;

/**
 * A jitter/latency route's `finish`: the benchmark's JitterResult fields on the result (broadcast
 * key redacted), with its meanings: `csrResumes` counts only CSR recoveries (0 for every other
 * target, as the benchmark reports), AnyCable session restores go to `sessionRestores`;
 * `label` the query's or the benchmark's; `latencySamplesSorted` only when samplesCap > 0.
 */
export function benchmarkFields<R extends object>(result: R, post: Record<string, unknown>, o: { route: string; server: string }): Record<string, unknown> {
  const r = redactBroadcastKey(result);
  const resumes = typeof r.csrResumes === 'number' ? r.csrResumes : 0;
  const reconnects = typeof r.reconnects === 'number' ? r.reconnects : 0;
  const clients = typeof r.clients === 'number' ? r.clients : 0;
  const jitterEvents = typeof r.jitterEvents === 'number' ? r.jitterEvents : 0;
  const enc = r.latencyHistogram as EncodedLatency | undefined;
  const csr = CSR.has(o.server) ? resumes : 0;
  const fields = {
    ...r,
    label: (post.label as string | undefined) ?? BENCH_LABEL[o.route] ?? o.route,
    publishedMessages: typeof r.published === 'number' ? r.published : 0,
    avgJittersPerClient: clients ? round2(jitterEvents / clients) : 0,
    latencySamples: enc?.count ?? 0,
    csrResumes: csr,
    csrResumeRatePct: CSR.has(o.server) && jitterEvents ? round2((csr * 100) / Math.max(reconnects, 1)) : null,
    sessionRestores: SESSION.has(o.server) ? resumes : 0,
  };
  // The sorted samples last, by the throughput/whispers finish's own rule.
  return withSortedSamples(fields, post);
}

/**
 * A throughput/whispers route's `finish`: `latencySamplesSorted` alone, when the query's samplesCap
 * > 0 (the benchmark's sorted-sample export, from the same histogram the result's percentiles use).
 */
export function withSortedSamples<R extends object>(r: R, post: Record<string, unknown>): Record<string, unknown> {
  const enc = (r as { latencyHistogram?: EncodedLatency }).latencyHistogram;
  const samplesCap = post.samplesCap as number;
  return samplesCap > 0 && enc ? { ...r, latencySamplesSorted: sortedSamples(enc, samplesCap) } : (r as Record<string, unknown>);
}
