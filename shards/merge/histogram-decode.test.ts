import { describe, expect, it } from 'vitest';
import { HistogramDecoder } from './histogram-decode.ts';
import { mergeShards } from './merge.ts';
import { screenOutcomes } from './schema.ts';
import { done, shardResult, widestHistogram } from './fixtures.ts';
import type { ShardResult } from './types.ts';

/** A healthy shard with no histogram: nothing of it is decoded, so a tiny deadline cannot touch it. */
const healthy = (): ShardResult => {
  const { latencyHistogram: _h, ...r } = shardResult({ clients: 10, msgs: 10 });
  return r;
};
const slow = (): ShardResult => ({ ...shardResult({ clients: 1000, msgs: 1000 }), latencyHistogram: widestHistogram() });

describe('histogram decoding runs on a worker under a deadline', () => {
  it('a valid histogram that passes the pre-scan but decodes past the deadline: the decoder is stopped, its shard excluded, the healthy shard merged', async () => {
    const { merged, perShard, validity } = await mergeShards([done('s1', healthy()), done('s2', slow())], { decodeDeadlineMs: 1 });
    expect(perShard.map((s) => s.status)).toEqual(['done', 'invalid']);
    expect(perShard[1]!.error).toBe('SHARD_RESULT_INVALID: latencyHistogram did not decode within its 1 ms deadline (decoder stopped)');
    expect(merged).toMatchObject({ clients: 10, receivedDeliveries: 100, lostDeliveries: 0 });
    expect(merged.latencyHistogram).toBeUndefined();
    expect(validity.flags.find((f) => f.code === 'SHARD_RESULT_INVALID')!.shards).toEqual(['s2']);
  });

  it('the same histogram within the default deadline is merged: the deadline alone refused it', async () => {
    const { merged, perShard } = await mergeShards([done('s1', healthy()), done('s2', slow())]);
    expect(perShard.map((s) => s.status)).toEqual(['done', 'done']);
    expect(merged).toMatchObject({ clients: 1010, latencyRawMs: { count: 2 ** 18 } });
  });

  it('the screen hands on the library\'s re-encoding, so the merge never reads a shard\'s own bytes', async () => {
    const r = shardResult({ clients: 10, msgs: 10, latenciesMs: [5, 6, 7] });
    // Whitespace the pre-scan tolerates: the string handed on is the encoder's, not what the shard sent.
    const [o] = await screenOutcomes([done('s1', { ...r, latencyHistogram: { ...r.latencyHistogram!, histogram: ` ${r.latencyHistogram!.histogram}\n` } })]);
    expect(o!.status).toBe('done');
    expect(o!.result!.latencyHistogram).toEqual(r.latencyHistogram);
  });

  it('a stopped decode and a failed one are each answered; a failed one leaves the worker to decode the next', async () => {
    const d = new HistogramDecoder(1);
    try {
      expect(await d.decode(widestHistogram().histogram)).toEqual({ problem: 'latencyHistogram did not decode within its 1 ms deadline (decoder stopped)' });
      const relaxed = new HistogramDecoder();
      try {
        expect(await relaxed.decode('AAAA')).toMatchObject({ problem: expect.stringMatching(/^latencyHistogram does not decode: /) });
        const ok = shardResult({ clients: 1, msgs: 3, latenciesMs: [1, 2, 3] }).latencyHistogram!;
        expect(await relaxed.decode(ok.histogram)).toMatchObject({ total: 3 });
      } finally {
        await relaxed.close();
      }
    } finally {
      await d.close();
    }
  });
});
