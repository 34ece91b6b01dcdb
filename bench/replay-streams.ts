/**
 * What idle streams cost the replay server's memory broker: the sweep's time per tick (it must
 * stay flat as idle streams grow: it visits what expires, not what is held) and the heap per
 * stream (the basis of STREAM_OVERHEAD_BYTES). With `--redis URL`, Redis's used_memory per stream
 * too (REDIS_STREAM_OVERHEAD_BYTES); use a scratch Redis, the bench writes under `bench-streams:`.
 *
 *   node --expose-gc --import tsx bench/replay-streams.ts [--streams 200000] [--redis redis://127.0.0.1:6379]
 *
 * First, the heap per retained message of full histories (1,000 streams x 100), besides the texts.
 */
import { parseArgs } from 'node:util';
import { MemoryBroker } from '../services/replay-server/broker/memory.ts';
import { RedisBroker } from '../services/replay-server/broker/redis.ts';

const { values } = parseArgs({ options: { streams: { type: 'string', default: '200000' }, redis: { type: 'string' } } });
const total = Number(values.streams);
if (!Number.isInteger(total) || total < 1000 || total > 10_000_000) throw new Error('--streams must be an integer from 1000 to 10000000');
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

// Full histories, measured first on a fresh heap: what one retained message costs the heap
// besides its text, at the default history of 100 per stream (the texts are made first and held
// here, so only the broker's own structures grow between the two measurements).
{
  const streams = 1000;
  const perStream = 100;
  const texts = Array.from({ length: streams * perStream }, (_, i) => Buffer.from(`{"k":"bench","seq":${String(i).padStart(12, '0')},"pad":"${'x'.repeat(18)}"}`).toString('latin1'));
  const full = new MemoryBroker({ historyLimit: perStream, historyTtlSec: 300, sessionTtlSec: 300, sweepIntervalMs: 1e9, maxStreams: streams, now: () => 1_000_000_000 });
  // Every stream exists with one message, so the measured fill creates none.
  for (let i = 0; i < streams; i++) full.publishSync([{ stream: `bench/full-${i}`, message: '{}' }]);
  gc();
  gc();
  const held = process.memoryUsage().heapUsed;
  for (let i = 0; i < texts.length; i++) full.publishSync([{ stream: `bench/full-${i % streams}`, message: texts[i]! }]);
  gc();
  gc();
  const after = process.memoryUsage().heapUsed;
  // The fill leaves `perStream` retained per stream where there was one.
  console.log(`full histories: ${streams} streams x ${perStream} messages of ${texts[0]!.length} characters: ${Math.round((after - held) / (streams * (perStream - 1)))} bytes of heap per retained message besides its text`);
  await full.close();
}

let now = 1_000_000_000;
const b = new MemoryBroker({ historyLimit: 100, historyTtlSec: 300, sessionTtlSec: 300, sweepIntervalMs: 1e9, maxStreams: total, now: () => now });
const rows: Record<string, number | string>[] = [];
gc();
const heap0 = process.memoryUsage().heapUsed;
let made = 0;
for (const target of [total / 20, total / 4, total].map(Math.round)) {
  for (; made < target; made++) b.publishSync([{ stream: `bench/stream-${made}`, message: '{"n":1}' }]);
  gc();
  const perStream = (process.memoryUsage().heapUsed - heap0) / made;
  // Ticks with nothing expiring: every stream idle (published 10 s ago, TTL 300 s).
  now += 10_000;
  const ticks = 50;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ticks; i++) {
    now += 1000;
    b.sweep();
  }
  const msPerTick = Number(process.hrtime.bigint() - t0) / 1e6 / ticks;
  rows.push({ idleStreams: made, sweepMsPerTick: Number(msPerTick.toFixed(4)), visitsPerTick: b.sweepVisits, heapBytesPerStreamWithOneMessage: Math.round(perStream) });
}
await b.close();
console.table(rows);

if (values.redis) {
  const n = Math.min(total, 20_000);
  const r = new RedisBroker({ historyLimit: 100, historyTtlSec: 300, sessionTtlSec: 0, url: values.redis, prefix: 'bench-streams:', probeIntervalMs: 0, maxStreams: n * 2 });
  await r.connect();
  const mem = async () => Number(/used_memory:(\d+)/.exec(await (r as unknown as { cmd: { info(s: string): Promise<string> } }).cmd.info('memory'))![1]);
  const before = await mem();
  for (let i = 0; i < n; i += 500) await r.publish(Array.from({ length: 500 }, (_, j) => ({ stream: `bench/stream-${i + j}`, message: '{"n":1}' })));
  const after = await mem();
  // One entry each: besides the stream, its hq member and history entry (~100 bytes) are in this figure.
  console.log(`redis: ${n} streams with one 7-byte message each: ${Math.round((after - before) / n)} bytes of used_memory per stream (names ~18 bytes)`);
  await r.close();
}
