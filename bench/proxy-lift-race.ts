/**
 * Does lifting a blackhole catch a client that reconnects the moment it sees the close?
 *
 *   npm run bench:proxy-lift-race -- --toxiproxy-url http://127.0.0.1:28474 [--lifts 10] [--clients 12]
 *     [--out docs/results/x.json]
 *
 * Per proxy (Rebound's standalone proxy, and the real Toxiproxy when given) and per lift, this
 * opens `clients` connections through a fresh proxy to a server that answers `hello` with `ok`,
 * applies the blackhole, and lifts it. Each client reconnects at once when its connection closes
 * (as the ws target does: no offline floor) and sends `hello`; a reconnect whose connection closes
 * before `ok` arrives was caught by the rest of the lift. Two lifts are compared:
 * `two-removals`, the plan's lift before commit 215267d (remove the upstream `timeout` toxic, then
 * the downstream one; each removal closes every connection), and `one-step`, the plan's lift now
 * (CATALOG.blackhole: upstream toxic to toxicity 0, then remove the downstream one). The times
 * of each API call and each reconnect, relative to the start of the lift, are kept per lift.
 */
import { createConnection } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseCliOptions } from '../lib/cli.ts';
import type { OptionTable } from '../lib/options.ts';
import { isAllowedTargetUrl } from '../engine/measure/addresses.ts';
import { currentCommit } from '../engine/measure/summary.ts';
import { BLACKHOLE, CATALOG } from '../chaos/plans/catalog.ts';
import { startEmbeddedProxy } from '../chaos/plans/proxies.ts';
import { listenAddress, startTcpServer, uniqueName } from '../chaos/testing.ts';
import { createChaosProxy, type ChaosProxyHandle } from '../chaos/toxiproxy/client.ts';

const OPTIONS = {
  toxiproxyUrl: { type: 'string', default: '', doc: 'a real Toxiproxy API (loopback) to measure next to Rebound\'s proxy' },
  lifts: { type: 'int', min: 1, max: 100, default: 10, doc: 'lifts per proxy and lift variant' },
  clients: { type: 'int', min: 1, max: 200, default: 12, doc: 'connections held by each blackhole' },
  out: { type: 'optional-string', default: undefined, doc: 'write the figure file here' },
} satisfies OptionTable;

type Variant = 'two-removals' | 'one-step';

/** The plan's blackhole before 215267d: two timeout toxics, lifted by two removals (newest first). */
async function applyTwoRemovals(p: ChaosProxyHandle): Promise<() => Promise<void>> {
  await p.addToxic({ type: 'timeout', name: BLACKHOLE.down, stream: 'downstream', attributes: { timeout: 0 } });
  await p.addToxic({ type: 'timeout', name: BLACKHOLE.up, stream: 'upstream', attributes: { timeout: 0 } });
  return async () => {
    await p.removeToxic(BLACKHOLE.up);
    await p.removeToxic(BLACKHOLE.down);
  };
}

interface LiftRecord {
  calls: { call: string; startMs: number; endMs: number }[];
  closedAtLift: number;
  reconnectAtMs: number[];
  caught: number;
}

async function oneLift(api: string, upstream: string, variant: Variant, clients: number): Promise<LiftRecord> {
  const p0 = await createChaosProxy(api, { name: uniqueName('lift-race'), upstream });
  const rec: LiftRecord = { calls: [], closedAtLift: 0, reconnectAtMs: [], caught: 0 };
  let t0 = 0;
  const rel = () => Math.round((performance.now() - t0) * 10) / 10;
  // Time every API call of the lift.
  const p: ChaosProxyHandle = Object.create(p0);
  p.removeToxic = async (n) => { const s = rel(); await p0.removeToxic(n); rec.calls.push({ call: `remove ${n}`, startMs: s, endMs: rel() }); };
  p.updateToxic = async (n, c) => { const s = rel(); const r = await p0.updateToxic(n, c); rec.calls.push({ call: `update ${n} ${JSON.stringify(c)}`, startMs: s, endMs: rel() }); return r; };
  const { host, port } = listenAddress(p0.listen);
  let lifting = false;
  const pending: Promise<void>[] = [];
  const dial = (reconnect: boolean) =>
    new Promise<void>((resolve) => {
      const s = createConnection({ host, port, noDelay: true });
      let ok = false;
      s.on('error', () => {});
      s.on('connect', () => s.write('hello\n'));
      s.on('data', (d) => {
        if (ok || !d.toString().includes('ok')) return;
        ok = true;
        resolve();
      });
      s.on('close', () => {
        if (!ok) {
          if (reconnect && lifting) rec.caught++;
          return resolve();
        }
        if (!lifting) return;
        rec.closedAtLift++;
        rec.reconnectAtMs.push(rel());
        pending.push(dial(true)); // at once, like the ws target
      });
    });
  try {
    await Promise.all(Array.from({ length: clients }, () => dial(false)));
    const lift = variant === 'one-step' ? await CATALOG.blackhole.apply!(p) : await applyTwoRemovals(p);
    await new Promise((r) => setTimeout(r, 200));
    lifting = true;
    t0 = performance.now();
    await lift();
    // Every reconnect settles: through (ok) or caught (closed first); 5 s bounds a stuck one.
    const deadline = Date.now() + 5000;
    while (pending.length < clients && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await Promise.race([Promise.all(pending), new Promise((r) => setTimeout(r, 5000))]);
    lifting = false;
    return rec;
  } finally {
    await p0.remove();
  }
}

async function main(): Promise<void> {
  const opts = parseCliOptions(OPTIONS);
  const url = opts.toxiproxyUrl.replace(/\/$/, '');
  if (url !== '' && !isAllowedTargetUrl(url)) {
    process.stderr.write(`error RR_ERR_OPTION_INVALID: --toxiproxy-url must be a loopback http URL; got ${JSON.stringify(opts.toxiproxyUrl)}\n`);
    process.exit(2);
  }
  const server = await startTcpServer((s) => s.on('data', (d) => d.toString().includes('hello') && s.write('ok\n')));
  const embedded = await startEmbeddedProxy();
  const sides: [string, string][] = [['rebound', embedded.url]];
  if (url) sides.push(['toxiproxy', url]);
  const results = [];
  try {
    for (const variant of ['two-removals', 'one-step'] as const) {
      for (const [proxy, api] of sides) {
        const lifts: LiftRecord[] = [];
        for (let k = 0; k < opts.lifts; k++) lifts.push(await oneLift(api, server.upstream, variant, opts.clients));
        const reconnects = lifts.reduce((a, l) => a + l.closedAtLift, 0);
        const caught = lifts.reduce((a, l) => a + l.caught, 0);
        process.stderr.write(`${variant} via ${proxy}: ${caught} of ${reconnects} immediate reconnects caught (${opts.lifts} lifts x ${opts.clients})\n`);
        results.push({ variant, proxy, lifts: opts.lifts, clients: opts.clients, reconnects, caught, liftsWithCatches: lifts.filter((l) => l.caught > 0).length, perLift: lifts });
      }
    }
  } finally {
    embedded.child.kill('SIGTERM');
    await server.close();
  }
  const doc = {
    commit: currentCommit(),
    command: ['npm run bench:proxy-lift-race --', ...process.argv.slice(2)].join(' '),
    measuredAt: new Date().toISOString(),
    node: process.version,
    toxiproxy: url ? { url, version: ((await fetch(`${url}/version`).then((r) => r.json())) as { version?: string }).version } : null,
    results,
  };
  if (opts.out) await writeFile(opts.out, `${JSON.stringify(doc, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify({ ...doc, results: results.map(({ perLift: _, ...r }) => r) }, null, 2)}\n`);
  process.exit(0);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
