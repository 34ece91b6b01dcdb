import { sleep } from '../../../lib/time.ts';
import { sourceAddress } from '../../../engine/measure/addresses.ts';
import { rampShare } from '../../../engine/measure/connections.ts';
import { readPayload } from '../../../engine/targets/payload.ts';
import { watchRunner } from '../../../engine/measure/runner-health.ts';
import { classifyConnectError } from '../../../engine/measure/runner-limits.ts';
import { leanClientFor } from '../../../engine/targets/index.ts';
import type { LeanClient } from '../../../engine/targets/lean-client.ts';
import { toldLabel, type HolderStart, type HolderTally, type HolderToParent, type ParentToHolder } from './messages.ts';

/**
 * One S6 holder process: opens its share of the connections on the global ramp, forwards every
 * arrival to the parent (which keeps the one DeliveryLedger and LatencyRecorder), and records
 * what each client was told when the server went away. Separate processes for the fd limit and
 * so one event loop never carries every socket.
 */
const send = (m: HolderToParent) => {
  if (process.connected) process.send?.(m);
};
const health = watchRunner();
const t: HolderTally = { subscribed: 0, failed: 0, failureCauses: {}, told: {}, loopLagP99Ms: 0 };
const clients: LeanClient[] = [];
const open = new Set<number>();
let rows: number[] = [];
let stopping = false;
const flush = () => {
  if (rows.length) send({ type: 'arrivals', rows });
  rows = [];
};
const flusher = setInterval(flush, 200);

async function openOne(s: HolderStart, make: NonNullable<ReturnType<typeof leanClientFor>>, i: number): Promise<void> {
  const k = i % s.streams;
  const runId = `${s.runId}/${k}`;
  const c = make({ index: i, url: s.url, stream: `${s.streamPrefix}/${k}`, localAddress: sourceAddress(i, s.addresses) });
  const timer = setTimeout(() => c.close(), s.connectTimeoutMs);
  c.on('message', (m) => {
    const p = readPayload(m, runId);
    // Not this run's payload (another run on the stream, garbage): never a delivery.
    if (!p) return;
    rows.push(i, p.seq, m.at - p.sentAt, m.at);
  });
  try {
    await c.connect();
    t.subscribed++;
    open.add(i);
    clients.push(c);
    c.on('disconnected', ({ reason, detail }) => {
      if (stopping || !open.delete(i)) return;
      const label = toldLabel(reason, detail);
      t.told[label] = (t.told[label] ?? 0) + 1;
    });
  } catch (err) {
    t.failed++;
    const cause = classifyConnectError(err) ?? 'target';
    t.failureCauses[cause] = (t.failureCauses[cause] ?? 0) + 1;
    c.close();
  } finally {
    clearTimeout(timer);
  }
}

async function ramp(s: HolderStart): Promise<void> {
  const make = leanClientFor(s.target);
  if (!make) return void send({ type: 'error', message: `no lean client for target "${s.target}"` });
  await rampShare(s, (i) => openOne(s, make, i), () => stopping);
  send({ type: 'ramped', tally: { ...t } });
}

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  clearInterval(flusher);
  flush();
  // Still open when the parent stops us: the server let these go without a word, or has not yet.
  if (open.size) t.told['nothing: still open after the stop'] = open.size;
  t.loopLagP99Ms = health.stop().runnerLoopLagMs.p99;
  for (const c of clients) c.close();
  send({ type: 'done', tally: { ...t } });
  await sleep(200);
  process.exit(0);
}

process.on('message', (m: ParentToHolder) => {
  if (m.type === 'start') void ramp(m).catch((err: unknown) => send({ type: 'error', message: (err as Error).message }));
  else if (m.type === 'stop') void stop();
});
process.on('disconnect', () => process.exit(0));
send({ type: 'ready' });
