/**
 * Resume check at scale with the real client: N `@anycable/core` clients (through the `replay`
 * target adapter) on S streams, a steady publisher, and random socket drops; afterwards every
 * client must hold every message of its stream exactly once and in order.
 *
 *   npx tsx bench/replay-resume.ts [--clients 300] [--streams 10] [--drop-every-ms 100] [--duration-sec 15] [--reconnect tuned|default]
 */
import { loadavg } from 'node:os';
import { parseCliOptions } from '../lib/cli.ts';
import { sleep } from '../lib/time.ts';
import { sourceAddress } from '../runners/core/addresses.ts';
import { replayTarget } from '../runners/targets/anycable.ts';
import { startService } from '../services/common/spawn.ts';

const values = parseCliOptions({
  clients: { type: 'int', default: 300, min: 1, max: 15_000, doc: '@anycable/core clients (all in this process)' },
  streams: { type: 'int', default: 10, min: 1, max: 10_000, doc: 'streams, clients dealt round-robin' },
  dropEveryMs: { type: 'int', default: 100, min: 1, max: 60_000, doc: 'one random socket drop every this many ms' },
  durationSec: { type: 'number', default: 15, min: 1, max: 3600, doc: 'seconds of publishing and dropping' },
  reconnect: { type: 'enum', values: ['tuned', 'default'], default: 'tuned', doc: 'client reconnect strategy' },
  workers: { type: 'int', default: 1, min: 1, max: 64, doc: 'replay server worker processes' },
});
const n = values.clients;
const nStreams = values.streams;
const h = await startService('replay', { args: ['--workers', String(values.workers)] });
const seen = Array.from({ length: n }, () => [] as number[]);
let resumed = 0;
let drops = 0;
const clients = await Promise.all(
  Array.from({ length: n }, async (_, i) => {
    const c = replayTarget.createClient({ index: i, url: h.httpUrl, stream: `resume/${i % nStreams}`, localAddress: sourceAddress(i), reconnectStrategy: values.reconnect });
    c.on('message', (m) => seen[i]!.push((JSON.parse(m.data) as { seq: number }).seq));
    c.on('connected', (x) => void (x.resumed && resumed++));
    await c.connect();
    return c;
  }),
);
let seq = 0;
let publishing = true;
const publisher = (async () => {
  while (publishing) {
    const s = ++seq;
    const batch = Array.from({ length: nStreams }, (_, k) => ({ stream: `resume/${k}`, data: JSON.stringify({ seq: s, sentAt: Date.now() }) }));
    await fetch(`${h.httpUrl}/_broadcast`, { method: 'POST', body: JSON.stringify(batch) });
    await sleep(20);
  }
})();
const t0 = Date.now();
while (Date.now() - t0 < values.durationSec * 1000) {
  await sleep(values.dropEveryMs);
  if (clients[Math.floor(Math.random() * n)]!.drop()) drops++;
}
publishing = false;
await publisher;
const deadline = Date.now() + 30_000;
while (Date.now() < deadline && seen.some((s) => s.length < seq)) await sleep(200);
const metrics = (await (await fetch(`${h.httpUrl}/metrics`)).json()) as Record<string, number>;
const broken = seen.map((s, i) => ({ i, s })).filter(({ s }) => s.length !== seq || s.some((v, k) => v !== k + 1));
const summary = {
  bench: 'replay-resume',
  date: new Date().toISOString(),
  loadavg: loadavg().map((x) => Math.round(x * 100) / 100),
  clients: n,
  streams: nStreams,
  published: seq,
  drops,
  resumedConnects: resumed,
  serverRestoreHits: metrics.restoreHits,
  serverRestoreMisses: metrics.restoreMisses,
  serverHistoryRejected: metrics.historyRejected,
  clientsWithGapsOrDuplicates: broken.length,
  firstBroken: broken.slice(0, 3).map(({ i, s }) => ({ client: i, received: s.length, firstBadIndex: s.findIndex((v, k) => v !== k + 1) })),
};
process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
for (const c of clients) c.close();
await h.stop();
process.exit(broken.length === 0 ? 0 : 1);
