import { sourceAddress } from '../../../engine/measure/addresses.ts';
import { LatencyRecorder } from '../../../engine/measure/latency.ts';
import { addTotals, DeliveryLedger } from '../../../engine/measure/ledger.ts';
import { watchRunner } from '../../../engine/measure/runner-health.ts';
import { classifyConnectError } from '../../../engine/measure/runner-limits.ts';
import { getTarget, pickClient } from '../../../engine/targets/index.ts';
import { ClientFaults, childTargetModules } from '../../../engine/targets/user-module.ts';
import type { ArrivedMessage, TargetClient } from '../../../engine/targets/types.ts';
import { payloadOf } from '../../../engine/targets/payload.ts';
import { assertNever, sendToParent } from '../../../engine/measure/child-link.ts';
import type { FromLoader, LoaderAssignment, StepKey, ToLoader } from './messages.ts';
import { nodeOf } from './plan.ts';

/**
 * One loader process: holds its slice of the connections through the TargetClient interface and,
 * per step, records every arrival into one DeliveryLedger per sequence space (stream, publisher)
 * and one LatencyRecorder. Only the parent's settle message says what was accepted, so the
 * ledger expects exactly what the publisher saw accepted.
 */
interface Conn {
  client: TargetClient;
  stream: number;
  /** This connection's row in its stream's ledgers. */
  row: number;
  subscribed: boolean;
}
interface Slot {
  ledger: DeliveryLedger;
  stream: number;
}
interface Step {
  slots: Map<string, Slot>;
  latency: LatencyRecorder;
  misrouted: number;
  disconnects: Record<string, number>;
  health: ReturnType<typeof watchRunner>;
  cpu0: NodeJS.CpuUsage;
  t0: number;
}

let me = -1;
const conns: Conn[] = [];
/** A target file's hook faults over every connection made, failed ones included. */
const faults = new ClientFaults();
/** Subscribed connections per stream (ledger rows). */
let rowsPerStream: number[] = [];
let step: Step | undefined;

const send = (m: FromLoader, then?: () => void) => sendToParent(m, then);

function onMessage(c: Conn, m: ArrivedMessage): void {
  const s = step;
  if (!s) return;
  const p = payloadOf(m);
  const slot = p && typeof p.runId === 'string' ? s.slots.get(p.runId) : undefined;
  if (!p || !slot || typeof p.seq !== 'number' || typeof p.sentAt !== 'number') {
    // Not this step's (a late arrival of the previous step, or garbage): foreign, never a delivery.
    s.misrouted++;
    return;
  }
  if (slot.stream !== c.stream) {
    s.misrouted++;
    return;
  }
  const ms = m.at - p.sentAt;
  if (slot.ledger.record(c.row, p.seq, ms) === 'new') s.latency.recordMs(ms);
}

async function open(a: LoaderAssignment): Promise<void> {
  me = a.loader;
  const t0 = Date.now();
  // The target's lean client where it declares one (the official libraries cost the rig several
  // times the CPU per delivery, and on two shared cores the rig would become the limit), else its full client.
  const make = pickClient(getTarget(a.target), { prefer: 'lean' })!.create;
  const causes: Record<string, number> = {};
  let failed = 0;
  let rig = 0;
  let next = 0;
  const worker = async () => {
    while (next < a.count) {
      const i = a.first + next++;
      const stream = i % a.streams.length;
      const client = make({ index: i, url: a.urls[nodeOf(i, a.streams.length, a.urls.length)]!, stream: a.streams[stream]!, localAddress: sourceAddress(i) });
      const c: Conn = { client, stream, row: -1, subscribed: false };
      client.on('message', (m) => onMessage(c, m));
      client.on('disconnected', (d) => {
        if (step && c.subscribed) step.disconnects[d.reason] = (step.disconnects[d.reason] ?? 0) + 1;
      });
      client.on('error', () => undefined);
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([client.connect(), new Promise<never>((_, rej) => (timer = setTimeout(() => rej(Object.assign(new Error('connect timeout'), { code: 'TIMEOUT' })), a.connectTimeoutMs)))]);
        c.subscribed = true;
        conns.push(c);
      } catch (err) {
        failed++;
        const limit = classifyConnectError(err);
        if (limit) rig++;
        const cause = limit ?? ((err as { code?: string }).code || (err as Error).message || 'error').slice(0, 80);
        causes[cause] = (causes[cause] ?? 0) + 1;
        client.close();
        faults.dropped(client);
      } finally {
        clearTimeout(timer);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(a.concurrency, a.count)) }, worker));
  // Rows are dealt after connecting, so only subscribed connections are expected to receive.
  rowsPerStream = new Array<number>(a.streams.length).fill(0);
  for (const c of conns) c.row = rowsPerStream[c.stream]!++;
  send({ type: 'ready', loader: me, requested: a.count, subscribed: conns.length, failed, failureCauses: causes, rigLimitFailures: rig, ms: Date.now() - t0 });
}

/**
 * Poll rounds. On loopback the sender's write does the receiver's TCP work and, when the receiver
 * sleeps in epoll, wakes it (an inter-processor interrupt, costly in a VM): tens of thousands of
 * wake-ups a second charged to the target's `write`, a cost a target never pays for clients on
 * other machines. During a step a loader therefore does not sleep in epoll: it naps `pollMs`
 * between loop turns (the pending immediate makes each poll non-blocking), so arrivals queue in
 * the socket buffers without waking anyone and are read in a batch. Arrival stamps are taken
 * when read, so latency includes up to one nap; the loop-lag rule still sees a loader that falls
 * behind.
 */
const napCell = new Int32Array(new SharedArrayBuffer(4));
let napping: NodeJS.Immediate | undefined;
function startPolling(ms: number): void {
  stopPolling();
  if (ms <= 0) return;
  const nap = () => {
    Atomics.wait(napCell, 0, 0, ms);
    napping = setImmediate(nap);
  };
  napping = setImmediate(nap);
}
function stopPolling(): void {
  if (napping) clearImmediate(napping);
  napping = undefined;
}

function start(keys: StepKey[], messagesPerKey: number, pollMs: number): void {
  const slots = new Map<string, Slot>();
  for (const k of keys) {
    const rows = rowsPerStream[k.stream] ?? 0;
    if (rows > 0) slots.set(k.key, { ledger: new DeliveryLedger(rows, messagesPerKey), stream: k.stream });
  }
  step = { slots, latency: new LatencyRecorder(), misrouted: 0, disconnects: {}, health: watchRunner(), cpu0: process.cpuUsage(), t0: Date.now() };
  startPolling(pollMs);
  send({ type: 'started', loader: me });
}

function settle(accepted: Record<string, [number, number][]>): void {
  const s = step;
  if (!s) return send({ type: 'error', loader: me, message: 'settle without a started step' });
  step = undefined;
  stopPolling();
  const totals = addTotals(
    [...s.slots].map(([key, slot]) => {
      for (const [a, b] of accepted[key] ?? []) for (let q = a; q <= b; q++) slot.ledger.accept(q);
      return slot.ledger.totals();
    }),
  );
  totals.foreign += s.misrouted;
  const cpu = process.cpuUsage(s.cpu0);
  const wallMs = Math.max(1, Date.now() - s.t0);
  send({
    type: 'step',
    loader: me,
    totals,
    latency: s.latency.encode(),
    health: s.health.stop(),
    cpuPct: Math.round(((cpu.user + cpu.system) / 1000 / wallMs) * 1000) / 10,
    open: conns.filter((c) => c.subscribed).length - Object.values(s.disconnects).reduce((x, y) => x + y, 0),
    disconnects: s.disconnects,
    ...faults.field(conns.map((c) => c.client)),
  });
}

// A target file of the user's (TARGET_MODULES, inherited from the parent) is loaded before `open` looks its target up.
const targets = childTargetModules();
process.on('message', (m: ToLoader) => {
  switch (m.type) {
    case 'open':
      targets.then(() => open(m.assignment)).catch((err: Error) => send({ type: 'error', loader: m.assignment.loader, message: err.message }));
      return;
    case 'start':
      start(m.keys, m.messagesPerKey, m.pollMs);
      return;
    case 'settle':
      settle(m.accepted);
      return;
    case 'close':
      for (const c of conns) c.client.close();
      send({ type: 'closed', loader: me }, () => setTimeout(() => process.exit(0), 50));
      return;
    default:
      assertNever(m);
  }
});
process.on('disconnect', () => process.exit(0));
