import { randomSeed } from '../../lib/rng.ts';
import { sleep } from '../../lib/time.ts';
import { sourceAddress } from '../core/addresses.ts';
import { rampConnect } from '../core/connections.ts';
import { LatencyRecorder, summarize } from '../core/latency.ts';
import { DeliveryLedger } from '../core/ledger.ts';
import { watchRunner } from '../core/runner-health.ts';
import { checkValidity } from '../core/validity.ts';
import { whisperClientFor, type WhisperClient } from '../targets/index.ts';
import { whispersPerClient, type WhispersOptions } from './options.ts';
import type { WhispersResult } from './result.ts';

export interface WhispersHooks {
  signal?: AbortSignal;
  progress?: (p: { phase: string; connected: number; published: number; received: number }) => void;
  log?: (line: string) => void;
}

interface Whisper {
  runId: string;
  from: number;
  k: number;
  sentAt: number;
  pad?: string;
}

const pct = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1e6) / 1e4 : 0);

/**
 * Client-to-client messages through the server: every client whispers to its room every
 * `interval` ms for `duration` s; every other member must receive each whisper once. One
 * DeliveryLedger per room (rows: members; messages: (k, sender) pairs), one latency recorder.
 */
export async function runWhispers(o: WhispersOptions, url: string, hooks: WhispersHooks = {}): Promise<WhispersResult> {
  const make = whisperClientFor(o.target)!;
  const started = Date.now();
  const runId = `${o.target}-${started.toString(36)}-${randomSeed()}`;
  const health = watchRunner();
  const perClient = whispersPerClient(o);
  const roomOf = (i: number) => i % o.rooms;
  const slotOf = (i: number) => Math.floor(i / o.rooms);
  const members = Array.from({ length: o.rooms }, (_, r) => Math.floor(o.clients / o.rooms) + (r < o.clients % o.rooms ? 1 : 0));
  const ledgers = members.map((m) => new DeliveryLedger(m, m * perClient));
  const latency = new LatencyRecorder();
  const connected = new Uint8Array(o.clients);
  const sent = new Int32Array(o.clients);
  let foreign = 0;
  let stopping = false;
  const pad = o.payload > 0 ? 'x'.repeat(o.payload) : undefined;

  const clients: WhisperClient[] = [];
  for (let i = 0; i < o.clients; i++) {
    const c = make({ index: i, url, stream: `${o.roomPrefix}-${roomOf(i)}`, localAddress: sourceAddress(i) });
    const room = roomOf(i);
    const row = slotOf(i);
    c.on('message', (m) => {
      let w: Partial<Whisper>;
      try {
        w = JSON.parse(m.data) as Partial<Whisper>;
      } catch {
        w = {};
      }
      if (w.runId !== runId || typeof w.from !== 'number' || typeof w.k !== 'number' || typeof w.sentAt !== 'number' || roomOf(w.from) !== room) return void foreign++;
      // Message id inside the room: whisper k of member slot s.
      const seq = w.k * members[room]! + slotOf(w.from) + 1;
      const lat = m.at - w.sentAt;
      if (ledgers[room]!.record(row, seq, lat) === 'new') latency.recordMs(lat);
    });
    c.on('error', () => {});
    clients.push(c);
  }
  const progress = (phase: string) => hooks.progress?.({ phase, connected: connected.reduce((a, b) => a + b, 0), published: sent.reduce((a, b) => a + b, 0), received: latency.count });
  const timer = setInterval(() => progress('whisper'), 1000);
  try {
    hooks.log?.(`whispers: ${o.clients} clients in ${o.rooms} rooms on ${o.target}, every ${o.interval} ms for ${o.duration} s`);
    const rampStart = Date.now();
    const book = await rampConnect({ count: o.clients, perSec: o.ramp, connect: (i) => clients[i]!.connect(), ...(hooks.signal ? { signal: hooks.signal } : {}) });
    // Who whispers and who is expected to hear is fixed here: a client whose connect timed out is
    // closed, so a connect landing later cannot hear whispers nobody expects it to.
    const { connectFailureCauses } = book.summary();
    for (let i = 0; i < o.clients; i++) {
      connected[i] = book.has(i) ? 1 : 0;
      if (!connected[i]) clients[i]!.close();
    }
    progress('connected');
    await sleep(500);
    // Each client whispers on its own phase inside the interval, so sends do not come in bursts.
    const t0 = Date.now();
    await Promise.all(
      clients.map(async (c, i) => {
        if (!connected[i]) return;
        for (let k = 0; k < perClient && !hooks.signal?.aborted; k++) {
          await sleep(t0 + (i / o.clients) * o.interval + k * o.interval - Date.now());
          const w: Whisper = { runId, from: i, k, sentAt: Date.now(), ...(pad ? { pad } : {}) };
          c.whisper(w as unknown as Record<string, unknown>);
          sent[i]!++;
        }
      }),
    );
    const publishEnd = Date.now();
    // Expected: each whisper reaches every other connected member of its room.
    const connectedIn = members.map(() => 0);
    for (let i = 0; i < o.clients; i++) if (connected[i]) connectedIn[roomOf(i)]!++;
    let expected = 0;
    for (let i = 0; i < o.clients; i++) expected += sent[i]! * Math.max(0, connectedIn[roomOf(i)]! - 1);
    const end = Date.now() + o.settle;
    while (Date.now() < end && latency.count < expected && !hooks.signal?.aborted) await sleep(100);
    stopping = true;
    for (const c of clients) c.close();
    const runner = health.stop();
    let received = 0;
    let duplicates = 0;
    let outOfOrder = 0;
    ledgers.forEach((l, r) => {
      for (let row = 0; row < members[r]!; row++) {
        const t = l.tally(row);
        received += t.received;
        duplicates += t.duplicates;
        outOfOrder += t.outOfOrder;
      }
    });
    const enc = latency.encode();
    const summary = summarize(enc);
    const initiallyConnected = connected.reduce((a, b) => a + b, 0);
    const whispersSent = sent.reduce((a, b) => a + b, 0);
    const partial = {
      test: 'whispers' as const,
      protocol: o.target,
      target: o.target,
      runId,
      startedAt: new Date(started).toISOString(),
      params: { ...o, url: undefined },
      n: o.clients,
      clients: o.clients,
      rooms: o.rooms,
      initiallyConnected,
      connectedClients: initiallyConnected,
      connectFailures: o.clients - initiallyConnected,
      connectFailureCauses,
      whisperIntervalMs: o.interval,
      whispersSent,
      whispersReceived: received,
      expectedReceived: expected,
      receivedDeliveries: received,
      expectedDeliveries: expected,
      lostDeliveries: Math.max(0, expected - received),
      deliveryRatePct: pct(received, expected),
      // Expected is already over peers that were connected: the two rates coincide.
      deliveryRateOfConnectedPct: pct(received, expected),
      // Whispers are sent by clients over their sockets: there is no publisher to refuse them.
      publishFailures: 0,
      publishFailureCauses: {} as Record<string, number>,
      duplicates,
      outOfOrder,
      foreignMessages: foreign,
      latencyMs: { p50: summary.latencyRawMs.p50, p95: summary.latencyRawMs.p95, p99: summary.latencyRawMs.p99, max: summary.latencyRawMs.max },
      ...summary,
      latencyHistogram: enc,
      totalElapsedMs: Date.now() - started,
      publishingMs: publishEnd - t0,
      aborted: hooks.signal?.aborted ?? false,
      runnerPeakRssMb: runner.runnerPeakRssMb,
      runner,
    };
    const validity = checkValidity({ ...partial, totalMessages: whispersSent, published: whispersSent, elapsedMs: Date.now() - rampStart, plannedMs: Math.ceil((o.clients * 1000) / o.ramp) + 500 + o.duration * 1000 + o.settle + 2000 });
    return { ...partial, validity };
  } finally {
    clearInterval(timer);
    if (!stopping) for (const c of clients) c.close();
  }
}
