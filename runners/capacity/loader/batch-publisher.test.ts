import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { publishBatches } from './batch-publisher.ts';

/**
 * A real HTTP endpoint that answers each `/_broadcast` batch after `delayMs`, recording what it
 * had in flight when each batch arrived: the publisher's pipelining must never put two batches
 * that share a key in flight together, and every key's sequence must arrive in order.
 */
async function slowTarget(delayMs: number) {
  const seen: { stream: string; seq: number }[] = [];
  const inFlight = new Set<Set<string>>();
  let maxConcurrent = 0;
  let sharedKeyOverlaps = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const items = JSON.parse(body) as { stream: string; data: string }[];
      const streams = new Set(items.map((i) => i.stream));
      for (const other of inFlight) if ([...streams].some((s) => other.has(s))) sharedKeyOverlaps++;
      inFlight.add(streams);
      maxConcurrent = Math.max(maxConcurrent, inFlight.size);
      for (const i of items) seen.push({ stream: i.stream, seq: (JSON.parse(i.data) as { seq: number }).seq });
      setTimeout(() => {
        inFlight.delete(streams);
        res.writeHead(201).end();
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    stats: () => ({ maxConcurrent, sharedKeyOverlaps }),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const keys = Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, stream: i, streamName: `s${i}` }));
let target: Awaited<ReturnType<typeof slowTarget>> | undefined;
afterEach(async () => {
  await target?.close();
  target = undefined;
});

describe('publishBatches pipelining', () => {
  it('keeps several batches in flight, never two sharing a key, and every key in order', async () => {
    target = await slowTarget(40);
    const accepted: number[][] = keys.map(() => []);
    // 300 msg/s in 10 ms ticks: 3 messages per batch, so the 10 keys recur every few batches and
    // a batch often has to wait for an earlier one holding the same key.
    const r = await publishBatches({ urls: [target.url], keys, ratePerSec: 300, durationMs: 600, tickMs: 10, maxInFlight: 4, onAccepted: (k, seq) => accepted[k]!.push(seq) });
    expect(r.failed).toBe(0);
    expect(r.published).toBe(r.offered);
    const s = target.stats();
    expect(s.maxConcurrent).toBeGreaterThan(1);
    expect(s.maxConcurrent).toBeLessThanOrEqual(4);
    expect(s.sharedKeyOverlaps).toBe(0);
    for (const k of keys) {
      const seqs = target.seen.filter((x) => x.stream === k.streamName).map((x) => x.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    }
    expect(accepted.flat().length).toBe(r.offered);
  });

  it('with maxInFlight 1 sends one batch at a time', async () => {
    target = await slowTarget(15);
    const r = await publishBatches({ urls: [target.url], keys, ratePerSec: 300, durationMs: 300, tickMs: 10, maxInFlight: 1, onAccepted: () => undefined });
    expect(r.published).toBe(r.offered);
    expect(target.stats().maxConcurrent).toBe(1);
  });
});

describe("publishBatches through a target's own function publish with sendBatch (Pusher's batch_events)", () => {
  it('sends up to maxBatch messages per call, never two of one stream in a call or in flight, every key in order', async () => {
    const calls: { streams: string[]; seqs: number[] }[] = [];
    const live = new Set<Set<string>>();
    let overlaps = 0;
    let singles = 0;
    const publish = {
      // A server that takes 20 ms a call; the messages' streams tell what the call carried.
      send: async (m: { stream: string; data: string }) => {
        singles++;
        await publish.sendBatch([m]);
      },
      sendBatch: async (ms: readonly { stream: string; data: string }[]) => {
        const streams = new Set(ms.map((m) => m.stream));
        for (const other of live) if ([...streams].some((s) => other.has(s))) overlaps++;
        live.add(streams);
        calls.push({ streams: ms.map((m) => m.stream), seqs: ms.map((m) => (JSON.parse(m.data) as { seq: number }).seq) });
        await new Promise((r) => setTimeout(r, 20));
        live.delete(streams);
      },
      maxBatch: 4,
    };
    const accepted: number[][] = keys.map(() => []);
    // 600 msg/s in 20 ms ticks: 12 messages a tick over 10 keys, so a tick's messages repeat keys.
    const r = await publishBatches({ urls: ['http://127.0.0.1:1'], keys, ratePerSec: 600, durationMs: 600, tickMs: 20, maxInFlight: 4, publish, onAccepted: (k, seq) => accepted[k]!.push(seq) });
    expect(r.failed).toBe(0);
    expect(r.published).toBe(r.offered);
    expect(Math.max(...calls.map((c) => c.streams.length))).toBe(4);
    expect(calls.length).toBeLessThan(r.offered / 2);
    for (const c of calls) expect(new Set(c.streams).size).toBe(c.streams.length);
    expect(overlaps).toBe(0);
    for (const k of keys) {
      const seqs = calls.flatMap((c) => c.seqs.filter((_, i) => c.streams[i] === k.streamName));
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      expect(accepted[keys.indexOf(k)]).toEqual(seqs);
    }
    // Calls of one message still go through send (a batch of one is not a batch).
    expect(singles).toBe(calls.filter((c) => c.streams.length === 1).length);
  });
});
