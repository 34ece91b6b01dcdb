import { sleep } from '../../lib/time.ts';
import { sourceAddress } from '../../engine/measure/addresses.ts';
import { rampShare } from '../../engine/measure/connections.ts';
import { rss, watchRunner } from '../../engine/measure/runner-health.ts';
import { classifyConnectError, openFileLimit } from '../../engine/measure/runner-limits.ts';
import { getTarget, pickClient } from '../../engine/targets/index.ts';
import { ClientFaults, childTargetModules } from '../../engine/targets/user-module.ts';
import { LeanClient, LeanStage } from '../../engine/targets/lean-client.ts';
import type { ClientOptions, TargetClient } from '../../engine/targets/types.ts';
import { cableUrl } from '../../engine/targets/anycable.ts';
import { readPayload } from '../../engine/targets/payload.ts';
import { assertNever, sendToParent } from '../../engine/measure/child-link.ts';
import { toldLabel, type ParentToWorker, type WorkerStart, type WorkerTally, type WorkerToParent } from './messages.ts';

/**
 * One idle-runner worker process: opens its share of the clients on the global ramp schedule,
 * holds them, reports counts and its own RSS. Separate processes because the fd limit is per
 * process, and so one event loop never carries every socket. Capacity S6's holders are these
 * workers over several streams, forwarding every arrival to the parent (which keeps the one
 * DeliveryLedger) and recording what each client was told when the server went away.
 */
const send = (m: WorkerToParent) => sendToParent(m);

const health = watchRunner();
const baselineRssBytes = rss();
const clients: TargetClient[] = [];
/** A target file's hook faults over every client made, failed ones included. */
const faults = new ClientFaults();
let stopping = false;
let progressTimer: NodeJS.Timeout | undefined;
let rows: number[] = [];
let flusher: NodeJS.Timeout | undefined;
const flush = () => {
  if (rows.length) send({ type: 'arrivals', rows });
  rows = [];
};
const t: WorkerTally = {
  attempted: 0,
  connected: 0,
  welcomed: 0,
  subscribed: 0,
  failed: 0,
  failureCauses: {},
  failureSamples: [],
  lastSubscribedAt: 0,
  open: 0,
  disconnects: {},
  told: {},
  baselineRssBytes,
  peakRssBytes: baselineRssBytes,
  loopLagP99Ms: 0,
};

function snapshot(final = false): WorkerTally {
  t.peakRssBytes = Math.max(t.peakRssBytes, rss());
  if (final) {
    const h = health.stop();
    t.loopLagP99Ms = h.runnerLoopLagMs.p99;
    t.peakRssBytes = Math.max(t.peakRssBytes, Math.round(h.runnerPeakRssMb * 1048576));
  }
  return { ...t, failureCauses: { ...t.failureCauses }, failureSamples: [...t.failureSamples], disconnects: { ...t.disconnects }, told: { ...t.told } };
}

/** The AnyCable cable URL with `?pi=` (the client asks the server for a longer ping period). */
function withPingInterval(base: string, sec: number | undefined): string {
  if (!sec) return base;
  const u = new URL(cableUrl(base));
  u.searchParams.set('pi', String(sec));
  return u.toString();
}

function openOne(s: WorkerStart, make: (o: ClientOptions) => TargetClient, i: number): Promise<void> {
  const k = s.streams ? i % s.streams : 0;
  const c = make({ index: i, url: withPingInterval(s.url, s.pingInterval), stream: s.streams ? `${s.stream}/${k}` : s.stream, localAddress: sourceAddress(i, s.addresses) });
  if (s.runId !== undefined) {
    const runId = `${s.runId}/${k}`;
    c.on('message', (m) => {
      const p = readPayload(m, runId);
      // Not this run's payload (another run on the stream, garbage): never a delivery.
      if (p) rows.push(i, p.seq, m.at - p.sentAt, m.at);
    });
  }
  t.attempted++;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    c.close();
  }, s.connectTimeoutMs);
  return c.connect().then(
    () => {
      t.connected++;
      t.welcomed++;
      t.subscribed++;
      t.open++;
      t.lastSubscribedAt = Date.now();
      clients.push(c);
      c.on('disconnected', ({ reason, detail }) => {
        t.open--;
        if (stopping) return;
        t.disconnects[reason] = (t.disconnects[reason] ?? 0) + 1;
        const label = toldLabel(reason, detail);
        t.told[label] = (t.told[label] ?? 0) + 1;
      });
      // A full client whose library reconnects by itself is open again (a lean one never reconnects alone).
      c.on('connected', ({ attempt }) => void (attempt > 0 && t.open++));
    },
    (err: unknown) => {
      // Only a lean client knows how far it got; a full client that failed counts as not connected.
      // Duck-typed: a target file outside the tree may bring its own copy of LeanClient.
      const stage = typeof (c as Partial<LeanClient>).stage === 'number' ? (c as LeanClient).stage : LeanStage.Idle;
      if (stage >= LeanStage.Connected) t.connected++;
      if (stage >= LeanStage.Welcomed) t.welcomed++;
      t.failed++;
      const cause = classifyConnectError(err) ?? (timedOut ? 'timeout' : 'target');
      t.failureCauses[cause] = (t.failureCauses[cause] ?? 0) + 1;
      const e = err as { code?: string; message?: string };
      const sample = `${cause}: ${e?.code ?? e?.message ?? String(err)}`;
      if (t.failureSamples.length < 5 && !t.failureSamples.includes(sample)) t.failureSamples.push(sample);
      c.close();
      faults.dropped(c);
    },
  ).finally(() => clearTimeout(timer));
}

async function ramp(s: WorkerStart): Promise<void> {
  // The target's lean client, else (a target that declares none: an SSE target of the user's) its full client; the result says which.
  const make = pickClient(getTarget(s.target), { prefer: 'lean' })!.create;
  progressTimer = setInterval(() => send({ type: 'progress', tally: snapshot() }), 1000);
  if (s.runId !== undefined) flusher = setInterval(flush, 200);
  await rampShare(s, (i) => openOne(s, make, i), () => stopping);
  send({ type: 'ramped', tally: snapshot() });
}

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (progressTimer) clearInterval(progressTimer);
  if (flusher) clearInterval(flusher);
  flush();
  // Still open when the parent stops us: the server let these go without a word, or has not yet.
  if (t.open > 0) t.told['nothing: still open after the stop'] = t.open;
  const tally = snapshot(true);
  for (const c of clients) c.close();
  Object.assign(tally, faults.field(clients));
  send({ type: 'done', tally });
  // Let the close frames go out, then leave.
  await sleep(300);
  process.exit(0);
}

// A target file of the user's (TARGET_MODULES, inherited from the parent) is loaded before the ramp looks its target up.
const targets = childTargetModules();
process.on('message', (m: ParentToWorker) => {
  switch (m.type) {
    case 'start':
      void targets.then(() => ramp(m)).catch((err: unknown) => send({ type: 'error', message: (err as Error).message }));
      return;
    case 'stop':
      void stop();
      return;
    default:
      assertNever(m);
  }
});
// A parent that is gone cannot collect the tally: close the sockets and leave.
process.on('disconnect', () => {
  for (const c of clients) c.close();
  process.exit(0);
});
send({ type: 'ready', pid: process.pid, fdLimit: openFileLimit() ?? null, baselineRssBytes });
