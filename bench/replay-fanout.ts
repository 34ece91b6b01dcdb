/**
 * Fan-out: N connections (clients in separate processes), S streams, N/S subscribers per stream.
 * The publish rate is stepped up; each step reports deliveries/s, delivered % and latency
 * (publisher `sentAt` → client receipt). The result is the highest deliveries/s that stays within
 * budget (>= 99 % delivered, p99 <= 100 ms).
 *
 *   npx tsx bench/replay-fanout.ts [--connections 10000] [--streams 1000] [--rates 1000,2000,4000,6000,8000,10000]
 *                                  [--step-sec 8] [--workers 1] [--node-options=...] [--url http://host:port]
 */
import { loadavg } from 'node:os';
import { parseCliOptions } from '../lib/cli.ts';
import { sleep } from '../lib/time.ts';
import { isAllowedTargetUrl } from '../runners/core/addresses.ts';
import { startService } from '../services/common/spawn.ts';
import { openClients } from './replay-common.ts';

const values = parseCliOptions({
  connections: { type: 'int', default: 10_000, min: 1, max: 100_000, doc: 'connections (clients in separate processes)' },
  streams: { type: 'int', default: 1000, min: 1, max: 100_000, doc: 'streams; subscribers per stream = connections / streams' },
  rates: { type: 'string', default: '1000,2000,4000,6000,8000,10000,12000', pattern: /^\d+(,\d+)*$/, doc: 'publish rates to step through, msg/s, comma-separated' },
  stepSec: { type: 'number', default: 8, min: 1, max: 600, doc: 'seconds per step' },
  tickMs: { type: 'int', default: 20, min: 1, max: 1000, doc: 'publisher batch interval, ms' },
  workers: { type: 'int', default: 1, min: 1, max: 64, doc: 'replay server worker processes' },
  url: { type: 'string', default: '', doc: 'an already running server (loopback), e.g. ours under a profiler, instead of starting one' },
  nodeOptions: { type: 'string', default: '', doc: 'NODE_OPTIONS for the server process' },
  serverArgs: { type: 'string', default: '', doc: 'extra replay-server CLI args, space-separated (e.g. "--compact-heap false")' },
  json: { type: 'bool', default: false, doc: 'print one JSON line' },
  client: { type: 'enum', values: ['lean-ext', 'raw-ext'], default: 'lean-ext', doc: 'client implementation: lean-ext (bare socket, cheapest) or raw-ext (the ws library)' },
});
if (values.url && !isAllowedTargetUrl(values.url)) {
  process.stderr.write(`error RR_ERR_OPTION_INVALID: --url must be a loopback http URL; got ${JSON.stringify(values.url)}\n`);
  process.exit(2);
}
const total = values.connections;
const streams = Array.from({ length: values.streams }, (_, i) => `fan/${i}`);
const subsPerStream = total / streams.length;
const stepSec = values.stepSec;
const tickMs = values.tickMs;

const h = values.url
  ? { httpUrl: values.url.replace(/\/$/, ''), stop: async () => 0 }
  : await startService('replay', { args: ['--workers', String(values.workers), ...values.serverArgs.split(' ').filter(Boolean)], env: { NODE_OPTIONS: values.nodeOptions }, startTimeoutMs: 60_000 });
const metrics = async () => {
  try {
    return (await (await fetch(`${h.httpUrl}/metrics`)).json()) as { cpuPct: number; rssBytes: number };
  } catch {
    return { cpuPct: NaN, rssBytes: NaN };
  }
};
const clients = await openClients({ mode: values.client, url: h.httpUrl, total, streams });
process.stderr.write(`fanout: ${clients.connected} connected (${clients.failed} failed) in ${clients.connectMs} ms\n`);
await sleep(2000);
await clients.mark();

interface Step {
  rateMsgs: number;
  targetDeliveriesPerSec: number;
  published: number;
  expected: number;
  received: number;
  deliveredPct: number;
  deliveriesPerSec: number;
  p50: number;
  p99: number;
  max: number;
  serverCpuPct: number;
  serverRssMiB: number;
  ok: boolean;
}

async function step(rate: number): Promise<Step> {
  let published = 0;
  let seq = 0;
  let inflight = 0;
  const perTick = (rate * tickMs) / 1000;
  let carry = 0;
  await metrics();
  const t0 = Date.now();
  const timer = setInterval(() => {
    carry += perTick;
    const n = Math.floor(carry);
    carry -= n;
    if (n === 0) return;
    const sentAt = Date.now();
    const batch = Array.from({ length: n }, () => {
      seq++;
      return { stream: streams[seq % streams.length]!, data: JSON.stringify({ seq, sentAt }) };
    });
    inflight++;
    fetch(`${h.httpUrl}/_broadcast`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(batch) })
      .then(async (r) => {
        await r.arrayBuffer();
        if (r.status === 201) published += n;
      })
      .catch(() => {})
      .finally(() => inflight--);
  }, tickMs);
  await sleep(stepSec * 1000);
  clearInterval(timer);
  const elapsed = (Date.now() - t0) / 1000;
  const m = await metrics();
  while (inflight > 0) await sleep(20);
  await sleep(2000); // drain
  const c = await clients.mark();
  const expected = published * subsPerStream;
  const deliveredPct = expected ? (100 * c.received) / expected : 0;
  const p99 = c.histogram.getValueAtPercentile(99);
  return {
    rateMsgs: rate,
    targetDeliveriesPerSec: rate * subsPerStream,
    published,
    expected,
    received: c.received,
    deliveredPct: Math.round(deliveredPct * 100) / 100,
    deliveriesPerSec: Math.round(c.received / elapsed),
    p50: c.histogram.getValueAtPercentile(50),
    p99,
    max: c.histogram.maxValue,
    serverCpuPct: m.cpuPct,
    serverRssMiB: Math.round(m.rssBytes / 1048576),
    ok: deliveredPct >= 99 && p99 <= 100,
  };
}

const steps: Step[] = [];
for (const r of values.rates.split(',').map(Number)) {
  const s = await step(r);
  steps.push(s);
  process.stderr.write(`rate ${r} msg/s: ${s.deliveriesPerSec} deliveries/s, ${s.deliveredPct}% delivered, p50 ${s.p50} ms, p99 ${s.p99} ms${s.ok ? '' : '  (over budget)'}\n`);
  if (s.deliveredPct < 90 || s.p99 > 2000) break;
}
const best = steps.filter((s) => s.ok).reduce<Step | undefined>((a, s) => (!a || s.deliveriesPerSec > a.deliveriesPerSec ? s : a), undefined);
await clients.close();
await h.stop();
const summary = { bench: 'replay-fanout', date: new Date().toISOString(), connections: clients.connected, streams: streams.length, workers: values.workers, serverArgs: values.serverArgs, client: values.client, nodeOptions: values.nodeOptions, bestDeliveriesPerSecWithinBudget: best?.deliveriesPerSec ?? 0, loadavg: loadavg(), steps };
if (values.json) process.stdout.write(JSON.stringify(summary) + '\n');
else {
  process.stdout.write(`replay-fanout ${summary.date} connections=${summary.connections} streams=${summary.streams} workers=${summary.workers} server-args=${JSON.stringify(summary.serverArgs)} client=${summary.client} NODE_OPTIONS=${JSON.stringify(summary.nodeOptions)} loadavg=${summary.loadavg.map((x) => x.toFixed(2)).join(',')}\n`);
  console.table(steps);
  process.stdout.write(`best within budget (>=99% delivered, p99<=100ms): ${summary.bestDeliveriesPerSecWithinBudget} deliveries/s\n`);
}
process.exit(0);
