import { describe, expect, it } from 'vitest';
import { decodeFromCompressedBase64 } from 'hdr-histogram-js';
import { withTarget } from '../../engine/measure/local-target.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { parseJitterOptions } from './options.ts';
import { runJitterWorkers } from './workers.ts';

/** The jitter engine over two worker processes, merged: real target, real drops. */
describe('jitter over worker processes', () => {
  it('merges ledgers and histograms exactly and keeps one seeded timeline per worker', async () => {
    const o = parseJitterOptions({ values: { target: 'ws', clients: '30', msgs: '60', interval: '150', jitter: '2', 'jitter-ms': '1000', settle: '3000', seed: '77' }, origin: 'test' });
    const r = await withTarget(getTarget('ws'), undefined, (url) => runJitterWorkers(o, url, 2));
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expect(r.workers).toBe(2);
    expect(r.seed).toBe(77);
    expect(r.clients).toBe(30);
    expect(r.expectedDeliveries).toBe(30 * 60);
    expect(r.receivedDeliveries + r.lostDeliveries).toBe(r.expectedDeliveries);
    expect(r.lostDeliveries).toBeGreaterThan(0); // ws is at-most-once and every client is dropped
    const per = r.perWorker as { clients: number; stream: string; first: number; seed: number }[];
    expect(per.map((p) => p.clients)).toEqual([15, 15]);
    expect(per.map((p) => p.stream)).toEqual([`${r.stream}-w0`, `${r.stream}-w1`]);
    expect(new Set(per.map((p) => p.seed)).size).toBe(2);
    // Exact merge: the merged histogram holds every first delivery of both workers.
    expect(r.latencyHistogram.count).toBe(r.receivedDeliveries);
    expect(decodeFromCompressedBase64(r.latencyHistogram.histogram).totalCount).toBe(r.receivedDeliveries);
    // Drops of worker 1's clients carry global client indexes (15..29).
    const targets = r.chaos.timeline.map((e) => e.target);
    expect(Math.max(...targets)).toBeGreaterThanOrEqual(15);
    expect(Math.min(...targets)).toBeLessThan(15);
    expect(r.jitterEvents).toBe(r.chaos.disruptions[0]!.affectedClients);
  });

  it('an abort reaches every worker: each stops early and the merged result says aborted', async () => {
    const o = parseJitterOptions({ values: { target: 'ws', clients: '10', msgs: '300', interval: '100', jitter: '0', settle: '5000', seed: '8' }, origin: 'test' });
    const abort = new AbortController();
    const t0 = Date.now();
    const r = await withTarget(getTarget('ws'), undefined, (url) =>
      runJitterWorkers(o, url, 2, {
        signal: abort.signal,
        phase: (name) => {
          if (name === 'publish') setTimeout(() => abort.abort(), 1500);
        },
      }),
    );
    expect(r.aborted).toBe(true);
    expect(r.workers).toBe(2);
    expect(r.published).toBeGreaterThan(0);
    expect(r.published).toBeLessThan(300);
    expect(Date.now() - t0).toBeLessThan(25_000);
  });
});
