import { randomSeed } from '../../lib/rng.ts';
import { ClientTimelines } from '../../engine/measure/client-timelines.ts';
import { LatencyRecorder, summarize } from '../../engine/measure/latency.ts';
import { DeliveryLedger } from '../../engine/measure/ledger.ts';
import { DEFAULT_IN_FLIGHT_MS, resumeProtocolOf, tallyLoss, tallyOutcomes } from '../../engine/measure/loss-causes.ts';
import { watchRunner, type RunnerHealth } from '../../engine/measure/runner-health.ts';
import { checkValidity } from '../../engine/measure/validity.ts';
import { connectPhase } from '../../engine/session/phases/connect.ts';
import { deliveredToAll, settlePhase } from '../../engine/session/phases/settle.ts';
import { logLines, relayProgress, type RunHooks } from '../../engine/session/present.ts';
import { mergeLoss, pct, sum } from '../../engine/session/results.ts';
import { RunSession } from '../../engine/session/session.ts';
import { getTarget, whisperClientFor, type WhisperClient } from '../../engine/targets/index.ts';
import { parseJson } from '../../engine/targets/payload.ts';
import { whispersPerClient, type WhispersOptions } from './options.ts';

interface Whisper {
  runId: string;
  from: number;
  k: number;
  sentAt: number;
  pad?: string;
}

/**
 * Client-to-client messages through the server: every client whispers to its room every
 * `interval` ms for `duration` s; every other member must receive each whisper once. The run
 * session holds the clients, the connect ramp, the settle and the events; the whispers are booked
 * here, one DeliveryLedger and one set of client timelines per room (rows: members; messages:
 * (k, sender) pairs), one latency recorder.
 */
export async function runWhispers(o: WhispersOptions, url: string, hooks: RunHooks = {}) {
  const started = Date.now();
  const health = watchRunner();
  const run = openRun(o, url, started, hooks.signal);
  const { s, connected } = run;
  hooks.events?.(s.events);
  logLines(s.events, hooks.log, 'whispers');
  relayProgress(s.events, hooks.progress, run.count);
  const timer = setInterval(() => hooks.progress?.({ phase: 'whisper', ...run.count() }), 1000);
  try {
    const rampStart = Date.now();
    await s.run(connectPhase({ perSec: o.ramp, detail: `${o.clients} clients in ${o.rooms} rooms on ${o.target}, every ${o.interval} ms for ${o.duration} s` }));
    // Who whispers and who is expected to hear is fixed here: a client whose connect timed out is
    // closed, so a connect landing later cannot hear whispers nobody expects it to.
    const { connectFailureCauses } = s.book.summary();
    for (let i = 0; i < o.clients; i++) {
      connected[i] = s.book.has(i) ? 1 : 0;
      if (!connected[i]) s.clients[i]!.close();
    }
    s.events.emit('phase', 'whisper', `${run.count().connected} clients whispering`);
    await s.nap(500);
    const t0 = Date.now();
    await whisperAll(run, t0);
    const publishEnd = Date.now();
    const { expected, roomsWithoutPeers } = expectedOf(run);
    const rooms = run.ledgers.map((l, room) => deliveredToAll(l, (row) => run.connected[run.globalOf(room, row)] === 1, wantedIn(run, room)));
    await s.run(settlePhase({ maxMs: o.settle, stepMs: 100, until: () => rooms.every((delivered) => delivered()) }));
    s.close();
    const partial = report(run, { started, expected, roomsWithoutPeers, connectFailureCauses, publishingMs: publishEnd - t0, runner: health.stop() });
    const validity = checkValidity({ ...partial, totalMessages: partial.whispersSent, published: partial.whispersSent, elapsedMs: Date.now() - rampStart, plannedMs: whispersPlannedMs(o) });
    return { ...partial, validity };
  } finally {
    clearInterval(timer);
    s.close();
  }
}

/** One whispers run: its rooms, the books per room, who connected and how many each sent. */
type WhispersRun = ReturnType<typeof openRun>;

/** The session with the whisper clients, every arrival booked in its room's ledger and timelines. */
function openRun(o: WhispersOptions, url: string, started: number, signal: AbortSignal | undefined) {
  const make = whisperClientFor(o.target)!;
  const runId = `${o.target}-${started.toString(36)}-${randomSeed()}`;
  const perClient = whispersPerClient(o);
  const roomOf = (i: number) => i % o.rooms;
  const slotOf = (i: number) => Math.floor(i / o.rooms);
  const globalOf = (room: number, slot: number) => slot * o.rooms + room;
  const members = Array.from({ length: o.rooms }, (_, r) => Math.floor(o.clients / o.rooms) + (r < o.clients % o.rooms ? 1 : 0));
  const ledgers = members.map((m) => new DeliveryLedger(m, m * perClient));
  const target = getTarget(o.target);
  const timelines = members.map((m) => new ClientTimelines(m, m * perClient, resumeProtocolOf(target)));
  const latency = new LatencyRecorder();
  // 1 for a client connected when whispering began.
  const connected = new Uint8Array(o.clients);
  const sent = new Int32Array(o.clients);
  /** `notSent`: whispers due while their sender was offline (whisperAll). */
  const books = { foreign: 0, notSent: 0 };
  // Message id inside the room: whisper k of member slot s.
  const seqOf = (room: number, from: number, k: number) => k * members[room]! + slotOf(from) + 1;
  const s = new RunSession({
    target,
    urlOf: () => url,
    clients: o.clients,
    messages: 0,
    runId,
    stream: o.roomPrefix,
    seed: 0,
    ...(signal ? { signal } : {}),
    createClient: (x) => make({ index: x.index, url: x.url, stream: `${o.roomPrefix}-${roomOf(x.index)}`, ...(x.localAddress ? { localAddress: x.localAddress } : {}) }),
    onMessage: (i, m) => {
      const room = roomOf(i);
      const w = parseJson(m.data) as Partial<Whisper> | null | undefined;
      if (w?.runId !== runId || typeof w.from !== 'number' || typeof w.k !== 'number' || typeof w.sentAt !== 'number' || roomOf(w.from) !== room) return void books.foreign++;
      const seq = seqOf(room, w.from, w.k);
      const lat = m.at - w.sentAt;
      if (ledgers[room]!.record(slotOf(i), seq, lat) === 'new') {
        latency.recordMs(lat);
        timelines[room]!.arrival(slotOf(i), seq);
      }
    },
    hooks: {
      connected: (i, { resumed, at }) => timelines[roomOf(i)]!.connected(slotOf(i), at, resumed),
      disconnected: (i, { reason, detail, at }) => timelines[roomOf(i)]!.disconnected(slotOf(i), at, reason, detail),
    },
  });
  const count = () => ({ connected: connected.reduce((a, b) => a + b, 0), published: sent.reduce((a, b) => a + b, 0), received: latency.count, deliveredPct: 0 });
  return { o, target, runId, members, roomOf, slotOf, globalOf, seqOf, ledgers, timelines, latency, connected, sent, books, count, s };
}

/** Every connected client whispers on its own phase inside the interval, so sends do not come in bursts. */
async function whisperAll({ o, s, runId, connected, sent, timelines, roomOf, seqOf, books }: WhispersRun, t0: number): Promise<void> {
  const perClient = whispersPerClient(o);
  const pad = o.payload > 0 ? 'x'.repeat(o.payload) : undefined;
  await Promise.all(
    (s.clients as WhisperClient[]).map(async (c, i) => {
      if (!connected[i]) return;
      for (let tick = 0; tick < perClient && !s.aborted; tick++) {
        await s.nap(t0 + (i / o.clients) * o.interval + tick * o.interval - Date.now());
        if (s.aborted) break;
        // A member that is down sends nothing: its peers, connected or not, are owed nothing by the
        // target (counted apart: whispersNotSent). Whispers are numbered by what was sent (k), so
        // what a member sent stays "every k below sent[i]".
        if (s.up[i] !== 1) {
          books.notSent++;
          continue;
        }
        const k = sent[i]!;
        const w: Whisper = { runId, from: i, k, sentAt: Date.now(), ...(pad ? { pad } : {}) };
        // No server acknowledgement for a whisper: its window is its send.
        timelines[roomOf(i)]!.accepted(seqOf(roomOf(i), i, k), w.sentAt, w.sentAt);
        c.whisper(w as unknown as Record<string, unknown>);
        sent[i]!++;
      }
    }),
  );
}

/** Expected: each whisper reaches every other connected member of its room; and the rooms where nobody could hear. */
function expectedOf({ o, members, connected, sent, roomOf }: WhispersRun): { expected: number; roomsWithoutPeers: number } {
  const connectedIn = members.map(() => 0);
  for (let i = 0; i < o.clients; i++) if (connected[i]) connectedIn[roomOf(i)]!++;
  let expected = 0;
  for (let i = 0; i < o.clients; i++) expected += sent[i]! * Math.max(0, connectedIn[roomOf(i)]! - 1);
  return { expected, roomsWithoutPeers: connectedIn.filter((n) => n < 2).length };
}

function report(run: WhispersRun, r: { started: number; expected: number; roomsWithoutPeers: number; connectFailureCauses: Record<string, number>; publishingMs: number; runner: RunnerHealth }) {
  const { o, runId, ledgers, latency, s, books } = run;
  const { expected, runner } = r;
  const totals = ledgers.map((l) => l.totals());
  const received = sum(totals, (t) => t.receivedDeliveries);
  const enc = latency.encode();
  const summary = summarize(enc);
  const { connected: initiallyConnected, published: whispersSent } = run.count();
  return {
    test: 'whispers' as const,
    protocol: o.target,
    target: o.target,
    runId,
    startedAt: new Date(r.started).toISOString(),
    params: { ...o, url: undefined },
    n: o.clients,
    clients: o.clients,
    rooms: o.rooms,
    initiallyConnected,
    connectedClients: initiallyConnected,
    connectFailures: o.clients - initiallyConnected,
    connectFailureCauses: r.connectFailureCauses,
    whisperIntervalMs: o.interval,
    whispersSent,
    /**
     * Whispers due while their sender was offline (after a server restart, a kill, a drop): never
     * sent, so in neither whispersSent nor expectedReceived (WHISPERS_NOT_SENT says how many).
     */
    whispersNotSent: books.notSent,
    /** Unique (receiver, whisper) arrivals. */
    whispersReceived: received,
    /** Σ over whispers of (connected members of the room − 1). */
    expectedReceived: expected,
    /**
     * Rooms with fewer than two connected members: their whispers reach no one, so they count as
     * sent but add nothing to expectedReceived (a run whose clients mostly failed to connect can
     * read 100% over a handful of peers; this says how many rooms had none).
     */
    roomsWithoutPeers: r.roomsWithoutPeers,
    receivedDeliveries: received,
    expectedDeliveries: expected,
    lostDeliveries: Math.max(0, expected - received),
    deliveryRatePct: pct(received, expected),
    // Expected is already over peers that were connected: the two rates coincide.
    deliveryRateOfConnectedPct: pct(received, expected),
    // Whispers are sent by clients over their sockets: there is no publisher to refuse them.
    publishFailures: 0,
    publishFailureCauses: {} as Record<string, number>,
    duplicates: sum(totals, (t) => t.duplicates),
    outOfOrder: sum(totals, (t) => t.outOfOrder),
    foreignMessages: books.foreign,
    latencyMs: { p50: summary.latencyRawMs.p50, p95: summary.latencyRawMs.p95, p99: summary.latencyRawMs.p99, max: summary.latencyRawMs.max },
    ...summary,
    latencyHistogram: enc,
    totalElapsedMs: Date.now() - r.started,
    publishingMs: r.publishingMs,
    aborted: s.aborted,
    runnerPeakRssMb: runner.runnerPeakRssMb,
    runner,
    // Only when received is not above expected (duplicated ids would make the books not balance).
    ...(received <= expected ? whisperLoss(run) : {}),
  };
}

/** Which whispers member `row` of `room` is owed: each one its connected peers sent (seq k·m + slot + 1 is whisper k of `slot`). */
function wantedIn({ members, connected, sent, globalOf }: WhispersRun, room: number): (row: number, seq: number) => boolean {
  const m = members[room]!;
  return (row, seq) => {
    const slot = (seq - 1) % m;
    const from = globalOf(room, slot);
    return slot !== row && connected[from] === 1 && Math.floor((seq - 1) / m) < sent[from]!;
  };
}

/** Loss by cause per room: a member's missing whispers are those its connected peers sent that never came. */
function whisperLoss(run: WhispersRun) {
  const { target, members, timelines, ledgers, connected, globalOf } = run;
  const parts = members.map((m, room) => {
    const tl = timelines[room]!;
    const l = ledgers[room]!;
    const wanted = wantedIn(run, room);
    const lostSeqsOf = function* (row: number) {
      if (!connected[globalOf(room, row)]) return;
      yield* l.lostSeqsOf(row, wanted);
    };
    let lost = 0;
    for (let row = 0; row < m; row++) for (const _ of lostSeqsOf(row)) lost++;
    const options = { protocol: resumeProtocolOf(target), inFlightMs: DEFAULT_IN_FLIGHT_MS };
    const rows = Array.from({ length: m }, (_, row) => tl.timeline(row));
    const lossByCause = tallyLoss({ clients: m, lostSeqsOf, timelineOf: (row) => tl.timeline(row), windowOf: (seq) => tl.windowOf(seq), lostDeliveries: lost, options });
    return { lossByCause, resumeOutcomes: tallyOutcomes(rows, options.protocol), replayedDeliveries: 0, lateDeliveries: tl.lateReport(l) };
  });
  return mergeLoss(parts);
}

/** The run's one plan: the module's plannedMs and the OVERRAN_PLAN rule's. */
export const whispersPlannedMs = (o: WhispersOptions) => Math.ceil((o.clients * 1000) / o.ramp) + 500 + o.duration * 1000 + o.settle + 5000;
