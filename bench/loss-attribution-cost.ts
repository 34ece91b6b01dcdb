import { performance } from 'node:perf_hooks';
import { planDrops } from '../chaos/plans/schedule.ts';
import { ClientTimelines } from '../engine/measure/client-timelines.ts';
import { DeliveryLedger } from '../engine/measure/ledger.ts';
import { childRng } from '../lib/rng.ts';

/**
 * What loss attribution itself costs the main job, in CPU, without the job's noise: the exact
 * calls a jitter run makes into ClientTimelines (a window per accepted message, an arrival per
 * first delivery, a disconnect and a connect per drop) and its `report` at the end, for the main
 * job's shape (500 clients, 60 messages every 500 ms, the seeded drop plan every 10 s + U(0,5)
 * offline ~1 s), at-most-once (ws) and history-replaying (replay) alike. The ledger is filled
 * outside the timed part: the runner has it with or without attribution.
 *   npx tsx bench/loss-attribution-cost.ts [--reps 20] [--clients 500] [--msgs 60]
 * Prints one JSON line: per protocol, the median ms of recording and of report over the reps.
 */
const arg = (name: string, d: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : d;
};
const reps = arg('reps', 20);
const clients = arg('clients', 500);
const msgs = arg('msgs', 60);
const interval = 500;
const seed = 20261129;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function once(protocol: 'none' | 'history') {
  const rng = childRng(seed, 3);
  const plan = planDrops(seed, clients, 10, msgs * interval);
  const offline = plan.map((times) => times.map((at) => [at, at + 1000 + rng() * 500] as const));
  const ledger = new DeliveryLedger(clients, msgs);
  ledger.acceptAll();
  // Events in time order, as the runner sees them.
  type Ev = { t: number; f: (tl: ClientTimelines) => void };
  const evs: Ev[] = [];
  for (let c = 0; c < clients; c++) {
    evs.push({ t: -1000 + c, f: (tl) => tl.connected(c, -1000 + c, false) });
    for (const [a, b] of offline[c]!) {
      evs.push({ t: a, f: (tl) => (tl.disrupted(c, a), tl.disconnected(c, a, 'dropped')) });
      evs.push({ t: b, f: (tl) => (tl.connected(c, b, protocol !== 'none'), protocol !== 'none' && tl.history(c, true)) });
    }
  }
  for (let seq = 1; seq <= msgs; seq++) {
    const sent = (seq - 1) * interval;
    evs.push({ t: sent + 3, f: (tl) => tl.accepted(seq, sent, sent + 3) });
    for (let c = 0; c < clients; c++) {
      const gap = offline[c]!.find(([a, b]) => sent >= a && sent < b);
      if (gap && protocol === 'none') continue;
      const at = gap ? gap[1] + 5 : sent + 2 + rng() * 8;
      ledger.record(c, seq, at - sent);
      evs.push({ t: at, f: (tl) => tl.arrival(c, seq) });
    }
  }
  evs.sort((a, b) => a.t - b.t);
  const lost = ledger.totals().lostDeliveries;
  const t0 = performance.now();
  const tl = new ClientTimelines(clients, msgs, protocol);
  for (const e of evs) e.f(tl);
  const t1 = performance.now();
  const rep = tl.report(ledger, lost);
  const t2 = performance.now();
  return { recordMs: t1 - t0, reportMs: t2 - t1, lost, causes: rep.lossByCause, events: evs.length };
}

const out: Record<string, unknown> = { clients, msgs, reps };
for (const protocol of ['none', 'history'] as const) {
  once(protocol); // warm the JIT
  const runs = Array.from({ length: reps }, () => once(protocol));
  out[protocol] = { recordMsMedian: +median(runs.map((r) => r.recordMs)).toFixed(2), reportMsMedian: +median(runs.map((r) => r.reportMs)).toFixed(2), lostDeliveries: runs[0]!.lost, lossByCause: runs[0]!.causes, events: runs[0]!.events };
}
process.stdout.write(`${JSON.stringify(out)}\n`);
