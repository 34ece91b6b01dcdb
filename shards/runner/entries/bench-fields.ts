import { sortedSamples, type EncodedLatency } from '../../../runners/core/latency.ts';

/** The benchmark's `label` per route target (its stats.ts); Rebound-only targets keep their name. */
const BENCH_LABEL: Record<string, string> = { anycable: 'anycable', socketio: 'socketio-default', 'socketio-csr': 'socketio-csr', uws: 'uws' };
/** Targets whose resumes are Socket.IO connection-state recovery; AnyCable's are session restores. */
const CSR = new Set(['socketio-csr', 'socketio-csr-redis']);
const SESSION = new Set(['replay', 'anycable', 'replay-redis']);
const round2 = (x: number) => Math.round(x * 100) / 100;

/**
 * The benchmark's JitterResult fields on a Rebound jitter/latency result, with its meanings:
 * `csrResumes` counts only CSR recoveries (0 for every other target, as the benchmark reports),
 * AnyCable session restores go to `sessionRestores`; `latencySamplesSorted` only when samplesCap > 0.
 */
export function benchmarkFields(r: Record<string, unknown>, o: { route: string; server: string; label?: string | undefined; samplesCap: number }): Record<string, unknown> {
  const resumes = typeof r.csrResumes === 'number' ? r.csrResumes : 0;
  const reconnects = typeof r.reconnects === 'number' ? r.reconnects : 0;
  const clients = typeof r.clients === 'number' ? r.clients : 0;
  const jitterEvents = typeof r.jitterEvents === 'number' ? r.jitterEvents : 0;
  const enc = r.latencyHistogram as EncodedLatency | undefined;
  const csr = CSR.has(o.server) ? resumes : 0;
  const fields = {
    ...r,
    label: o.label ?? BENCH_LABEL[o.route] ?? o.route,
    publishedMessages: typeof r.published === 'number' ? r.published : 0,
    avgJittersPerClient: clients ? round2(jitterEvents / clients) : 0,
    latencySamples: enc?.count ?? 0,
    csrResumes: csr,
    csrResumeRatePct: CSR.has(o.server) && jitterEvents ? round2((csr * 100) / Math.max(reconnects, 1)) : null,
    sessionRestores: SESSION.has(o.server) ? resumes : 0,
  };
  return withSortedSamples(fields, o.samplesCap);
}

/** `latencySamplesSorted` alone (whispers, throughput), when samplesCap > 0. */
export function withSortedSamples(r: Record<string, unknown>, samplesCap: number): Record<string, unknown> {
  const enc = r.latencyHistogram as EncodedLatency | undefined;
  return samplesCap > 0 && enc ? { ...r, latencySamplesSorted: sortedSamples(enc, samplesCap) } : r;
}
