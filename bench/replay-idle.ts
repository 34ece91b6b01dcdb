/**
 * Idle memory: N idle, subscribed connections per server (clients in separate processes, spread
 * over 127.0.0.x), reported as (peak RSS − idle baseline) / connections, side by side for the
 * replay server and the ws / socket.io reference services. Also times SIGTERM with every
 * connection still open.
 *
 *   npx tsx bench/replay-idle.ts [--connections 10000] [--streams 1000] [--hold-sec 10] [--targets replay,ws,socketio]
 *                                [--node-options=--max-semi-space-size=1]
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseCliOptions } from '../lib/cli.ts';
import { sleep } from '../lib/time.ts';
import { startService, type ServiceName } from '../services/common/spawn.ts';
import { mib, openClients, rssBytes, rssSampler } from './replay-common.ts';

const values = parseCliOptions({
  connections: { type: 'int', default: 10_000, min: 1, max: 100_000, doc: 'idle connections (spread over client processes)' },
  streams: { type: 'int', default: 1000, min: 1, max: 100_000, doc: 'streams the connections subscribe to' },
  holdSec: { type: 'number', default: 10, min: 0, max: 3600, doc: 'seconds to hold every connection' },
  targets: { type: 'string', default: 'replay,ws,socketio', doc: 'servers to measure, comma-separated' },
  json: { type: 'bool', default: false, doc: 'print one JSON line' },
  nodeOptions: { type: 'string', default: '', doc: 'NODE_OPTIONS for the server processes, e.g. --max-semi-space-size=1' },
});
const total = values.connections;
const streams = Array.from({ length: values.streams }, (_, i) => `idle/${i}`);

/** How each service is started and which client speaks to it. */
const PLANS: Record<string, { service: ServiceName; args: string[]; mode: string; entry: string }> = {
  replay: { service: 'replay', args: [], mode: 'raw-ext', entry: 'services/replay-server/main.ts' },
  ws: { service: 'ws', args: [], mode: 'target:ws', entry: 'services/ws/main.ts' },
  socketio: { service: 'socketio', args: ['--mode', 'default'], mode: 'target:socketio', entry: 'services/socketio/main.ts' },
};

interface IdleResult {
  target: string;
  connected: number;
  failed: number;
  connectMs: number;
  baselineRssMiB: number;
  peakRssMiB: number;
  settledRssMiB: number;
  bytesPerConnPeak: number;
  bytesPerConnSettled: number;
  stopMs: number;
  serverRestartFrames: number;
}

async function measure(name: string): Promise<IdleResult | undefined> {
  const plan = PLANS[name];
  if (!plan || !existsSync(new URL(`../${plan.entry}`, import.meta.url))) {
    process.stderr.write(`skip ${name}: no ${plan?.entry ?? 'plan'}\n`);
    return undefined;
  }
  const h = await startService(plan.service, { args: plan.args, env: { NODE_OPTIONS: values.nodeOptions } });
  // Warm-up (same for every target): a few hundred connections come and go first, so lazily
  // compiled code and one-off allocations land in the baseline, not in the per-connection figure.
  const warm = await openClients({ mode: plan.mode, url: h.httpUrl, total: 300, streams });
  await warm.close();
  await sleep(3000);
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(rssBytes(h.pid));
    await sleep(200);
  }
  const baseline = samples.sort((a, b) => a - b)[2]!;
  const sampler = rssSampler(h.pid);
  sampler.start();
  const clients = await openClients({ mode: plan.mode, url: h.httpUrl, total, streams });
  process.stderr.write(`${name}: ${clients.connected} connected (${clients.failed} failed) in ${clients.connectMs} ms; holding ${values.holdSec} s\n`);
  await sleep(values.holdSec * 1000);
  const settled = rssBytes(h.pid);
  const peak = sampler.stop();
  await clients.mark();
  const stopMs = await h.stop(15_000);
  await sleep(500);
  const after = await clients.mark();
  await clients.close();
  const per = (v: number) => Math.round((v - baseline) / Math.max(1, clients.connected));
  return {
    target: name,
    connected: clients.connected,
    failed: clients.failed,
    connectMs: clients.connectMs,
    baselineRssMiB: mib(baseline),
    peakRssMiB: mib(peak),
    settledRssMiB: mib(settled),
    bytesPerConnPeak: per(peak),
    bytesPerConnSettled: per(settled),
    stopMs,
    serverRestartFrames: after.disconnects.server_restart ?? 0,
  };
}

const results: IdleResult[] = [];
for (const name of values.targets.split(',')) {
  const r = await measure(name.trim());
  if (r) results.push(r);
}
if (values.json) process.stdout.write(JSON.stringify({ bench: 'replay-idle', date: new Date().toISOString(), connections: total, nodeOptions: values.nodeOptions, loadavg: loadavg(), results }) + '\n');
else {
  process.stdout.write(`replay-idle ${new Date().toISOString()} connections=${total} streams=${streams.length} NODE_OPTIONS=${JSON.stringify(values.nodeOptions)} loadavg=${loadavg().map((x) => x.toFixed(2)).join(',')}\n`);
  console.table(results);
}
process.exit(0);
