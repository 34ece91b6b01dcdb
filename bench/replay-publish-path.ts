/**
 * What one broadcast message costs the replay server's own code, from the HTTP body to the last
 * subscriber's send, against the uWS reference server's topic hub doing the same job: both in this
 * process, no sockets (each socket is a stand-in whose send only counts), so the figure is the
 * JavaScript and garbage-collection part of a delivery that the S3 bench's kernel time and rig
 * noise hide (bench/replay-transport-cost.ts, docs/performance.md).
 *
 *   npm run bench:replay-publish-path -- [--rounds 6] [--bodies 2000] [--out FILE]   (--help: every option)
 *
 * The S3 shape: 10,000 subscribers over 1,000 streams, bodies of 60 messages as the capacity
 * publisher batches them, the replay server's default options (history 100 per stream, the
 * whole-broker byte cap) and its uWS transport's socket operations. Rounds alternate the two
 * subjects; each round times `--bodies` bodies (process CPU, garbage collector threads included).
 * Prints the median µs per message of each, their ratio and the gap per delivery; `--out` writes
 * that as JSON.
 */
import { writeFileSync } from 'node:fs';
import { parseCliOptions } from '../lib/cli.ts';
import type { OptionTable } from '../lib/options.ts';
import { commandLine } from '../engine/pages/command.ts';
import { parseBroadcastBody } from '../services/common/broadcast.ts';
import { resolveLimits } from '../services/common/limits.ts';
import { createTopicHub } from '../services/common/topic-hub.ts';
import { MemoryBroker } from '../services/replay-server/broker/memory.ts';
import { Connection } from '../services/replay-server/connection/index.ts';
import { createCounters } from '../services/replay-server/connection/types.ts';
import { toPublishItems } from '../services/replay-server/http/index.ts';
import { Hub, Subscription } from '../services/replay-server/hub/index.ts';
import { brokerOptions } from '../services/replay-server/index.ts';
import { resolveReplayOptions } from '../services/replay-server/options.ts';
import { uwsOps } from '../services/replay-server/transport/uws.ts';
import { currentCommit } from '../engine/measure/summary.ts';

export const OPTIONS = {
  rounds: { type: 'int', default: 6, min: 1, max: 50, doc: 'rounds; each times every subject once, subjects alternating' },
  bodies: { type: 'int', default: 2000, min: 10, max: 20_000, doc: 'publisher bodies (60 messages each) timed per subject per round' },
  out: { type: 'optional-string', default: undefined, doc: 'write the summary JSON here (the figure-file shape of docs/results/)' },
} as const satisfies OptionTable;
const o = parseCliOptions(OPTIONS);
const { rounds, bodies } = o;

const CONNECTIONS = 10_000;
const STREAMS = 1000;
const PER_BODY = 60;
const names = Array.from({ length: STREAMS }, (_, i) => `s3-${i}`);
let sends = 0;
/** A stand-in for a uWS socket: what the transports read, and a send that only counts. */
const socket = () => ({ open: true, c: undefined as unknown, k: undefined, p: false, send: () => ++sends && 1, getBufferedAmount: () => 0 });

let seq = 0;
/** One publisher body: PER_BODY messages spread over the streams, as JSON text like the capacity publisher's. */
const body = () => Buffer.from(JSON.stringify(Array.from({ length: PER_BODY }, () => ((seq++), { stream: names[(seq * 7919) % STREAMS], data: JSON.stringify({ k: `bench-${seq % STREAMS}`, seq, t: Date.now() }) }))));

/** The replay server's path: /_broadcast's items, the memory broker (history, caps), the hub and each connection's send. */
function replayPath(): (b: Buffer) => void {
  const opts = resolveReplayOptions({});
  const broker = new MemoryBroker(brokerOptions(opts));
  const hub = new Hub(uwsOps.encode);
  const ctx = { opts, hub, broker, counters: createCounters(), io: uwsOps } as unknown as ConstructorParameters<typeof Connection>[2];
  for (let i = 0; i < CONNECTIONS; i++) {
    const ws = socket();
    const conn = new Connection(ws, true, ctx);
    ws.c = conn;
    const stream = names[i % STREAMS]!;
    hub.add(new Subscription(conn, hub.intern(stream, JSON.stringify({ channel: '$pubsub', stream_name: stream })), stream, false));
  }
  broker.onMessages((msgs) => hub.deliver(msgs));
  return (b) => broker.publishSync(toPublishItems(parseBroadcastBody(b)));
}

/** The uWS reference server's path: the same body through the shared topic hub. */
function referencePath(): (b: Buffer) => void {
  type S = ReturnType<typeof socket>;
  const hub = createTopicHub<S, Buffer>(resolveLimits({}), { encode: (f) => Buffer.from(f), isOpen: (s) => s.open, bufferedAmount: (s) => s.getBufferedAmount(), write: (s) => void s.send(), terminate: () => {} });
  for (let i = 0; i < CONNECTIONS; i++) {
    const s = socket();
    hub.open(s);
    hub.frame(s, JSON.stringify({ type: 'subscribe', stream: names[i % STREAMS] }));
  }
  return (b) => void hub.deliver(parseBroadcastBody(b));
}

const subjects = { replay: replayPath(), uws: referencePath() };
for (const run of Object.values(subjects)) for (let i = 0; i < 200; i++) run(body()); // warm-up: JIT and full histories
const runs: Record<keyof typeof subjects, number[]> = { replay: [], uws: [] };
let deliveriesPerMessage = 0;
for (let r = 0; r < rounds; r++) {
  for (const [name, run] of Object.entries(subjects) as [keyof typeof subjects, (b: Buffer) => void][]) {
    const bs = Array.from({ length: bodies }, body);
    sends = 0;
    const t0 = process.cpuUsage();
    for (const b of bs) run(b);
    const cpu = process.cpuUsage(t0);
    runs[name].push((cpu.user + cpu.system) / (bodies * PER_BODY));
    deliveriesPerMessage = sends / (bodies * PER_BODY);
  }
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
const r2 = (n: number) => Math.round(n * 100) / 100;
const summary = {
  rounds,
  messagesPerRound: bodies * PER_BODY,
  deliveriesPerMessage,
  usPerMessage: { replay: r2(median(runs.replay)), uws: r2(median(runs.uws)) },
  perRound: { replay: runs.replay.map(r2), uws: runs.uws.map(r2) },
  ratio: r2(median(runs.replay) / median(runs.uws)),
  gapUsPerDelivery: Math.round(((median(runs.replay) - median(runs.uws)) / deliveriesPerMessage) * 1000) / 1000,
};
console.log(`µs of CPU per message (${deliveriesPerMessage} deliveries each), median of ${rounds} rounds of ${bodies * PER_BODY} messages`);
console.log(`replay ${summary.usPerMessage.replay} (${summary.perRound.replay.join(' / ')})`);
console.log(`uws    ${summary.usPerMessage.uws} (${summary.perRound.uws.join(' / ')})`);
console.log(`ratio ${summary.ratio}; the replay server's own code costs ${summary.gapUsPerDelivery} µs more per delivery`);
// The figure-file shape of docs/results/ (runners/perf-figures.test.ts): how it was made, then the result.
const command = commandLine('bench:replay-publish-path', OPTIONS, o);
if (o.out) writeFileSync(o.out, `${JSON.stringify({ commit: currentCommit(), command, measuredAt: new Date().toISOString(), results: [summary] }, null, 2)}\n`);
