/**
 * SIGSTOP of Redis for `STALL_MS` under `CLIENTS` raw WebSocket clients on two replay nodes
 * (in process, --broker redis, one real redis-server), Rebound's publisher at `RATE` msg/s with
 * idempotency keys and retries. Prints one JSON object: time to /health degraded, the slowest
 * publish answer, and per-client duplicates / out-of-order / lost accepted messages.
 *
 *   npx tsx services/replay-server/bench/sick-redis.ts [clients=300] [stallMs=10000] [rate=10]
 */
import { execSync } from 'node:child_process';
import WebSocket from 'ws';
import { startPublisher } from '../../../runners/core/publisher.ts';
import { startTestRedis } from '../../common/redis-testing.ts';
import { RedisBroker } from '../broker/redis.ts';
import { pubsubId, startTestServer } from '../testing.ts';

const [CLIENTS = 300, STALL_MS = 10_000, RATE = 10] = process.argv.slice(2).map(Number);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const redis = await startTestRedis();
const nodes: { broker: RedisBroker; t: Awaited<ReturnType<typeof startTestServer>> }[] = [];
for (let i = 0; i < 2; i++) {
  const broker = new RedisBroker({ historyLimit: 1000, historyTtlSec: 300, sessionTtlSec: 300, url: redis.url, prefix: 'bench:' });
  await broker.connect();
  nodes.push({ broker, t: await startTestServer({}, { broker }) });
}
const seen: number[][] = [];
const sockets: WebSocket[] = [];
for (let i = 0; i < CLIENTS; i++) {
  const got: number[] = [];
  seen.push(got);
  const ws = new WebSocket(nodes[i % 2]!.t.wsUrl, 'actioncable-v1-ext-json');
  sockets.push(ws);
  ws.on('message', (d) => {
    const f = JSON.parse(d.toString()) as { type?: string; message?: { seq?: number } };
    if (f.type === 'welcome') ws.send(JSON.stringify({ command: 'subscribe', identifier: pubsubId('bench') }));
    else if (f.message && typeof f.message.seq === 'number') got.push(f.message.seq);
  });
}
await sleep(1500);
const messages = Math.round(((STALL_MS + 8000) / 1000) * RATE);
const outcome = new Map<number, boolean>();
const pub = startPublisher({ url: nodes[0]!.t.httpUrl, stream: 'bench', runId: 'sick', messages, intervalMs: 1000 / RATE, timeoutMs: 3000, onPublished: (s, ok) => outcome.set(s, ok) });
const probeHealth = async () => (await fetch(`${nodes[1]!.t.httpUrl}/health`)).status;
await sleep(3000);
redis.signal('SIGSTOP');
const stopAt = Date.now();
let degradedMs = -1;
const watch = (async () => {
  while (Date.now() - stopAt < STALL_MS) {
    if (degradedMs < 0 && (await probeHealth()) === 503) degradedMs = Date.now() - stopAt;
    await sleep(50);
  }
})();
// One timed direct publish in the stall: the deadline as a caller sees it.
const t0 = Date.now();
const direct = await fetch(`${nodes[1]!.t.httpUrl}/_broadcast`, { method: 'POST', body: JSON.stringify({ stream: 'other', data: '1' }) });
const slowest = Date.now() - t0;
await watch;
redis.signal('SIGCONT');
const res = await pub.done;
await sleep(1500);
const accepted = [...outcome].filter(([, ok]) => ok).map(([s]) => s);
let dups = 0;
let ooo = 0;
let lost = 0;
for (const got of seen) {
  dups += got.length - new Set(got).size;
  for (let i = 1; i < got.length; i++) if (got[i]! < got[i - 1]!) ooo++;
  const have = new Set(got);
  for (const s of accepted) if (!have.has(s)) lost++;
}
let commit = '';
try {
  commit = execSync('git rev-parse HEAD', { encoding: 'utf8' }).trim();
} catch {}
console.log(JSON.stringify({ bench: 'sick-redis', commit, date: new Date().toISOString(), clients: CLIENTS, nodes: 2, ratePerSec: RATE, stallMs: STALL_MS, deadlineMs: 1000, probeIntervalMs: 500, healthDegradedAfterMs: degradedMs, publishInStall: { status: direct.status, answeredInMs: slowest }, publisher: { messages, published: res.published, failed: res.failed, retried: res.retried, failureCauses: res.failureCauses }, duplicates: dups, outOfOrder: ooo, acceptedLost: lost }, null, 2));
for (const ws of sockets) ws.terminate();
for (const n of nodes) {
  await n.t.close();
  await n.broker.close();
}
await redis.close();
process.exit(0);
