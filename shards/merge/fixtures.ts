import * as hdr from 'hdr-histogram-js';
import { LatencyRecorder, type EncodedLatency } from '../../engine/measure/latency.ts';
import { mulberry32 } from '../../lib/rng.ts';
import type { ShardOutcome, ShardResult } from './types.ts';

/**
 * Hand-built shard results for the merge's tests and its benchmark: counts chosen by the caller,
 * latencies recorded through the project's own recorder so the buckets are the real ones.
 */
export function shardResult(o: { clients: number; connected?: number; msgs: number; received?: number; published?: number; latenciesMs?: readonly number[]; fatal?: string }): ShardResult {
  const connected = o.connected ?? o.clients;
  const expected = o.clients * o.msgs;
  const received = o.received ?? connected * o.msgs;
  const rec = new LatencyRecorder();
  for (const v of o.latenciesMs ?? []) rec.recordMs(v);
  return {
    test: 'jitter',
    target: 'replay',
    clients: o.clients,
    connectedClients: connected,
    connectFailures: o.clients - connected,
    totalMessages: o.msgs,
    published: o.published ?? o.msgs,
    expectedDeliveries: expected,
    receivedDeliveries: received,
    lostDeliveries: expected - received,
    deliveryRatePct: Math.round((received / expected) * 1e6) / 1e4,
    latencyHistogram: rec.encode(),
    validity: { valid: !o.fatal, flags: o.fatal ? [{ code: o.fatal, severity: 'fatal', message: 'test flag' }] : [] },
  };
}

export const done = (name: string, result: ShardResult): ShardOutcome => ({ name, url: `http://127.0.0.1/${name}`, status: 'done', durationMs: 1, result });

/** `count` latencies drawn from a long-tailed distribution (seeded), ms. */
export function tailLatencies(seed: number, count: number, baseMs: number): number[] {
  const rng = mulberry32(seed);
  return Array.from({ length: count }, () => baseMs + -Math.log(1 - rng()) * baseMs * (rng() < 0.02 ? 20 : 1));
}

/**
 * A valid histogram that is as slow to decode as the pre-scan allows: the largest layout it admits
 * (1..2 at 5 digits: 2^18 buckets, MAX_COUNTS_LENGTH) with a sample in every bucket, so the
 * decoder steps through each one (about 40-100 ms here; a 1 ms deadline stops it every time).
 */
export function widestHistogram(): EncodedLatency {
  const h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 2, numberOfSignificantValueDigits: 5 });
  const buckets = 2 ** 18;
  for (let v = 0; v < buckets; v++) h.recordValue(v);
  return { histogram: hdr.encodeIntoCompressedBase64(h), minUs: 0, maxUs: buckets - 1, count: h.totalCount, negatives: 0 };
}
