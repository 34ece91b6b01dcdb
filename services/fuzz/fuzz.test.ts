/**
 * Seeded fuzz across every server Rebound runs: the replay server, the ws and Socket.IO reference
 * servers (each its own process via spawn.ts) and the chaos proxy (its own process, as
 * `npm run chaos:proxy` runs it). A few thousand HTTP requests and client frames, bounded in count
 * and in time, then: every process still up and healthy, no 5xx from a service, every error in
 * its documented shape, and each process's RSS within a bound of what it was before the run.
 *
 * Reproduce a failure with the seed it prints: FUZZ_SEED=<n> npx vitest run services/fuzz
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { io, type Socket as IoSocket } from 'socket.io-client';
import { childRng, type Rng } from '../../lib/rng.ts';
import { sleep } from '../../lib/time.ts';
import { startService, type ServiceHandle } from '../common/spawn.ts';
import { chaosRequest, engineFrame, ioEvent, replayFrame, serviceRequest, wsFrame } from './generators.ts';
import { chaosAnswerProblem, phaseAgent, pool, rssBytes, send, serviceAnswerProblem, startChaosProcess, type ChaosProcess } from './harness.ts';
import { uwsAvailability } from '../uws/load.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261130);
/** Planned work per target; the run also stops at RUN_MS, and must have done at least half. */
const PLAN = { httpPerService: 500, httpChaos: 600, replayFrames: 1200, wsFrames: 700, ioEvents: 500, engineFrames: 300, proxiedFrames: 400 };
const RUN_MS = 100_000;
/** RSS growth allowed per process over the whole run (warm-up excluded): catches leaks of the GB kind, not allocator noise. */
const RSS_BOUND = 64 * 1024 * 1024;

let replay: ServiceHandle;
let wsSvc: ServiceHandle;
let sio: ServiceHandle;
// uWS's own HTTP parser and frame handling get the same hostile input where its binary loads.
const UWS = uwsAvailability().available;
let uwsSvc: ServiceHandle | undefined;
/** The replay server once more on its uws transport (the first one runs on ws). */
let replayUws: ServiceHandle | undefined;
let chaos: ChaosProcess;
let pipePort = 0;

beforeAll(async () => {
  [replay, wsSvc, sio, chaos, uwsSvc, replayUws] = await Promise.all([
    startService('replay', { args: ['--transport', 'ws'] }),
    startService('ws'),
    startService('socketio'),
    startChaosProcess(SEED),
    UWS ? startService('uws') : undefined,
    UWS ? startService('replay', { args: ['--transport', 'uws'] }) : undefined,
  ]);
  // A proxy the API fuzz never names: frames go through it under toxics while the API is pounded.
  const res = await fetch(`http://127.0.0.1:${chaos.port}/proxies`, { method: 'POST', body: JSON.stringify({ name: 'fuzzpipe', listen: '127.0.0.1:0', upstream: `127.0.0.1:${wsSvc.port}` }) });
  pipePort = Number(((await res.json()) as { listen: string }).listen.split(':').pop());
  for (const toxic of [{ type: 'latency', attributes: { latency: 2, jitter: 1 } }, { type: 'slicer', stream: 'upstream', attributes: { average_size: 64, size_variation: 32, delay: 100 } }]) {
    await fetch(`http://127.0.0.1:${chaos.port}/proxies/fuzzpipe/toxics`, { method: 'POST', body: JSON.stringify(toxic) });
  }
}, 60_000);
afterAll(async () => {
  await Promise.all([replay?.stop(), wsSvc?.stop(), sio?.stop(), chaos?.stop(), uwsSvc?.stop(), replayUws?.stop()]);
});

interface Tally {
  sent: number;
  problems: string[];
}

/** Send `n` frames over a few raw WebSocket connections, reopening any the server closed. */
async function rawFrames(url: string, protocol: string | undefined, n: number, rng: Rng, gen: (r: Rng) => string | Buffer, deadline: number, hello?: string): Promise<Tally> {
  const conns: Array<WebSocket | undefined> = [];
  const open = () =>
    new Promise<WebSocket | undefined>((resolve) => {
      const ws = new WebSocket(url, protocol, { maxPayload: 64 * 1024 * 1024, handshakeTimeout: 5000 });
      ws.on('error', () => resolve(undefined));
      ws.on('open', () => {
        if (hello) ws.send(hello);
        resolve(ws);
      });
    });
  const t: Tally = { sent: 0, problems: [] };
  for (let i = 0; i < n && Date.now() < deadline; i++) {
    const k = i % 8;
    if (conns[k]?.readyState !== WebSocket.OPEN) {
      conns[k]?.terminate();
      conns[k] = await open();
      if (!conns[k]) {
        t.problems.push(`${url}: cannot connect`);
        continue;
      }
    }
    const frame = gen(rng);
    conns[k]!.send(frame, { binary: Buffer.isBuffer(frame) });
    t.sent++;
    if (i % 20 === 19) await sleep(2);
  }
  for (const c of conns) c?.terminate();
  return t;
}

async function ioEvents(url: string, n: number, rng: Rng, deadline: number): Promise<Tally> {
  const clients: Array<IoSocket | undefined> = [];
  const open = () =>
    new Promise<IoSocket | undefined>((resolve) => {
      const s = io(url, { transports: ['websocket'], reconnection: false, forceNew: true, timeout: 5000 });
      s.once('connect', () => resolve(s));
      s.once('connect_error', () => resolve(undefined));
      s.on('whisper', () => {});
      s.on('message', () => {});
    });
  const t: Tally = { sent: 0, problems: [] };
  for (let i = 0; i < n && Date.now() < deadline; i++) {
    const k = i % 6;
    if (!clients[k]?.connected) {
      clients[k]?.close();
      clients[k] = await open();
      if (!clients[k]) {
        t.problems.push('socket.io: cannot connect');
        continue;
      }
    }
    const { event, args } = ioEvent(rng);
    // Some events are reserved by the client library; it refuses to emit them, which is fine.
    try {
      clients[k]!.emit(event, ...args);
    } catch {
      /* reserved name */
    }
    t.sent++;
    if (i % 20 === 19) await sleep(2);
  }
  for (const c of clients) c?.close();
  return t;
}

async function http(port: number, n: number, rng: Rng, deadline: number, mk: (r: Rng) => Parameters<typeof send>[1], check: (a: Awaited<ReturnType<typeof send>>) => string | undefined, label: string): Promise<Tally> {
  const t: Tally = { sent: 0, problems: [] };
  // Requests are generated in order from the seed; only their sending overlaps.
  const reqs = Array.from({ length: n }, () => mk(rng));
  const agent = phaseAgent();
  t.sent = await pool(n, 6, deadline, async (i) => {
    const req = reqs[i]!;
    const problem = check(await send(port, req, agent));
    if (problem) t.problems.push(`${label} ${req.method} ${req.path.slice(0, 60)} ${JSON.stringify(req.headers)}: ${problem}`);
  });
  agent.destroy();
  return t;
}

async function fuzzAll(seed: number, scale: number, runMs: number) {
  const deadline = Date.now() + runMs;
  const r = (i: number) => childRng(seed, i);
  const n = (k: keyof typeof PLAN) => Math.ceil(PLAN[k] * scale);
  const chaosNames = ['fz0', 'fz1', 'fz2', 'fz3'];
  const upstream = `127.0.0.1:${wsSvc.port}`;
  const tallies = await Promise.all([
    http(replay.port, n('httpPerService'), r(1), deadline, serviceRequest, serviceAnswerProblem, 'replay'),
    http(wsSvc.port, n('httpPerService'), r(2), deadline, serviceRequest, serviceAnswerProblem, 'ws'),
    http(sio.port, n('httpPerService'), r(3), deadline, serviceRequest, serviceAnswerProblem, 'socketio'),
    http(chaos.port, n('httpChaos'), r(4), deadline, (g) => chaosRequest(g, upstream, chaosNames), chaosAnswerProblem, 'chaos'),
    rawFrames(`ws://127.0.0.1:${replay.port}/cable`, 'actioncable-v1-ext-json', n('replayFrames'), r(5), replayFrame, deadline),
    rawFrames(`ws://127.0.0.1:${wsSvc.port}/ws`, undefined, n('wsFrames'), r(6), wsFrame, deadline),
    ioEvents(sio.httpUrl, n('ioEvents'), r(7), deadline),
    rawFrames(`ws://127.0.0.1:${sio.port}/socket.io/?EIO=4&transport=websocket`, undefined, n('engineFrames'), r(8), engineFrame, deadline, '40'),
    rawFrames(`ws://127.0.0.1:${pipePort}/ws`, undefined, n('proxiedFrames'), r(9), wsFrame, deadline),
    ...(uwsSvc
      ? [http(uwsSvc.port, n('httpPerService'), r(10), deadline, serviceRequest, serviceAnswerProblem, 'uws'), rawFrames(`ws://127.0.0.1:${uwsSvc.port}/ws`, undefined, n('wsFrames'), r(11), wsFrame, deadline)]
      : []),
    ...(replayUws
      ? [
          http(replayUws.port, n('httpPerService'), r(12), deadline, serviceRequest, serviceAnswerProblem, 'replay-uws'),
          rawFrames(`ws://127.0.0.1:${replayUws.port}/cable`, 'actioncable-v1-ext-json', n('replayFrames'), r(13), replayFrame, deadline),
        ]
      : []),
  ]);
  const extra = uwsSvc ? 1 : 0; // uws (and replay on uws) where uWS loads
  const times = (k: string) => (k === 'httpPerService' ? 3 + 2 * extra : k === 'wsFrames' || k === 'replayFrames' ? 1 + extra : 1);
  return { sent: tallies.reduce((s, t) => s + t.sent, 0), planned: Object.keys(PLAN).reduce((s, k) => s + n(k as keyof typeof PLAN) * times(k), 0), problems: tallies.flatMap((t) => t.problems) };
}

const processes = () => [
  { name: 'replay', pid: replay.pid, alive: () => replay.child.exitCode === null && replay.child.signalCode === null, health: `${replay.httpUrl}/health` },
  { name: 'ws', pid: wsSvc.pid, alive: () => wsSvc.child.exitCode === null && wsSvc.child.signalCode === null, health: `${wsSvc.httpUrl}/health` },
  ...(uwsSvc ? [{ name: 'uws', pid: uwsSvc.pid, alive: () => uwsSvc!.child.exitCode === null && uwsSvc!.child.signalCode === null, health: `${uwsSvc.httpUrl}/health` }] : []),
  ...(replayUws ? [{ name: 'replay-uws', pid: replayUws.pid, alive: () => replayUws!.child.exitCode === null && replayUws!.child.signalCode === null, health: `${replayUws.httpUrl}/health` }] : []),
  { name: 'socketio', pid: sio.pid, alive: () => sio.child.exitCode === null && sio.child.signalCode === null, health: `${sio.httpUrl}/health` },
  { name: 'chaos', pid: chaos.pid, alive: () => chaos.child.exitCode === null && chaos.child.signalCode === null, health: `http://127.0.0.1:${chaos.port}/health` },
];

describe(`fuzz (seed ${SEED})`, () => {
  it('thousands of seeded requests and frames: no crash, errors in the documented shape, memory bounded', async () => {
    // Warm-up with another seed so lazy initialisation and JIT are not counted as growth.
    await fuzzAll(SEED + 1, 0.1, 20_000);
    await sleep(1000);
    const before = Object.fromEntries(processes().map((p) => [p.name, rssBytes(p.pid)]));

    const run = await fuzzAll(SEED, 1, RUN_MS);
    await sleep(2000);

    for (const p of processes()) {
      expect(p.alive(), `${p.name} still running (seed ${SEED})`).toBe(true);
      expect((await fetch(p.health)).status, `${p.name} /health`).toBe(200);
    }
    expect(run.problems.slice(0, 10), `problems (seed ${SEED}, ${run.problems.length} in all)`).toEqual([]);
    expect(run.sent, `work done before the ${RUN_MS} ms bound`).toBeGreaterThanOrEqual(run.planned / 2);
    const growth = Object.fromEntries(processes().map((p) => [p.name, rssBytes(p.pid) - before[p.name]!]));
    console.log(`fuzz seed ${SEED}: ${run.sent}/${run.planned} requests+frames; RSS growth MB ${JSON.stringify(Object.fromEntries(Object.entries(growth).map(([k, v]) => [k, Math.round(v / 1048576)])))}`);
    for (const [name, g] of Object.entries(growth)) expect(g, `${name} RSS growth (seed ${SEED})`).toBeLessThan(RSS_BOUND);
  }, 180_000);
});
