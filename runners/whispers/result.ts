import { num as count } from '../../lib/figures.ts';
import type { MergeSpec } from '../../engine/session/module.ts';
import { pct } from '../../engine/session/results.ts';
import type { runWhispers } from './run.ts';

/**
 * The benchmark's WhispersResult fields plus Rebound's ledger counts, histogram and validity, as
 * runWhispers builds them; the fields it shares with the publish-and-listen results carry their
 * names (RunFields: a whisper is a delivery).
 */
export type WhispersResult = Awaited<ReturnType<typeof runWhispers>>;

/** How whispers results add up over shards, besides the delivery fields they share (DELIVERY_MERGE). */
export const WHISPERS_MERGE: MergeSpec = {
  sum: ['whispersSent', 'whispersNotSent', 'whispersReceived', 'expectedReceived', 'roomsWithoutPeers'],
  max: ['publishingMs', 'totalElapsedMs'],
  counts: ['initiallyConnected', 'whispersSent', 'whispersNotSent', 'whispersReceived', 'expectedReceived', 'roomsWithoutPeers'],
  nonNegative: ['publishingMs', 'totalElapsedMs'],
  check(r) {
    const [clients, sent, received, rooms, lonely] = [count(r.clients), count(r.whispersSent), count(r.whispersReceived), count(r.rooms), count(r.roomsWithoutPeers)];
    // Every client hears at most every whisper sent.
    if (clients !== undefined && sent !== undefined && received !== undefined && received > clients * sent) return `whispersReceived ${received} exceeds clients x whispers sent ${clients * sent}`;
    return rooms !== undefined && lonely !== undefined && lonely > rooms ? `roomsWithoutPeers ${lonely} exceeds rooms ${rooms}` : undefined;
  },
  derive(merged, shards) {
    const [received, expected] = [count(merged.whispersReceived), count(merged.expectedReceived)];
    if (received !== undefined && expected !== undefined) merged.deliveryRatePct = pct(received, expected);
    // The benchmark's name for the raw percentiles: the same union, the same values.
    const raw = merged.latencyRawMs as { p50: number; p95: number; p99: number; max: number } | undefined;
    if (raw && shards.some((s) => s.result.latencyMs !== undefined)) merged.latencyMs = { p50: raw.p50, p95: raw.p95, p99: raw.p99, max: raw.max };
  },
  rules(merged) {
    const [received, expected] = [count(merged.whispersReceived), count(merged.expectedReceived)];
    return received !== undefined && expected !== undefined && received > expected ? [{ code: 'FLEET_RECEIVED_OVER_EXPECTED', severity: 'fatal', message: `merged whispers received ${received} > expected ${expected}` }] : [];
  },
};
