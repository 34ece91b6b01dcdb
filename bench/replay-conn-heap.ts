import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { WebSocket } from 'ws';
import { LeanClient } from '../engine/targets/lean-client.ts';
import { leanAnyCable } from '../engine/targets/anycable.ts';
import { createReplayServer } from '../services/replay-server/index.ts';
import { currentCommit } from '../engine/measure/summary.ts';
import { loadUws } from '../services/uws/load.ts';

/**
 * What one idle connection costs the replay server's heap, side by side: on the ws transport its
 * own frame reader (LeanServerSocket, arm `lean`) against ws's Receiver and Sender (arm `ws`), and
 * the uWebSockets.js transport (arm `uws`, skipped where its binary does not load): each arm is a fresh server process
 * (--expose-gc, --max-semi-space-size=1 as the local fleet starts it) that takes N lean AnyCable
 * clients (?pi=60, subscribed) from a child process, then after a full GC reports
 * (heapUsed, RSS) growth / N. Arms alternate (lean, ws, uws, lean, ws, uws ...).
 *   npx tsx bench/replay-conn-heap.ts [--n 5000] [--rounds 2] [--out file.json]
 * Prints per arm the medians; --out writes {commit, command, measuredAt, n, results: one row per run {arm, round, conns, heapPerConn, rssPerConn}, median}.
 */
const arg = (name: string, d: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : d;
};

type Arm = 'lean' | 'ws' | 'uws';
const ARMS: readonly Arm[] = loadUws().ok ? ['lean', 'ws', 'uws'] : ['lean', 'ws'];

async function serverArm(arm: Arm, n: number): Promise<void> {
  // The ws class only applies to the ws transport, so the lean and ws arms pin it.
  const srv = createReplayServer({ port: 0, host: '127.0.0.1', maxPingIntervalSec: 60, transport: arm === 'uws' ? 'uws' : 'ws' }, arm === 'ws' ? { webSocketClass: WebSocket } : {});
  const port = await srv.listen(0, '127.0.0.1');
  const gc = (globalThis as { gc?: () => void }).gc!;
  const mem = () => {
    gc();
    const m = process.memoryUsage();
    return { heap: m.heapUsed, rss: m.rss };
  };
  await new Promise((r) => setTimeout(r, 500));
  const m0 = mem();
  const clients = fork(new URL(import.meta.url), ['--clients', String(port), String(n)], { execArgv: ['--import', 'tsx'] });
  await new Promise<void>((r) => clients.on('message', (m) => m === 'done' && r()));
  await new Promise((r) => setTimeout(r, 2000));
  const m1 = mem();
  process.send!({ conns: srv.connectionCount(), heapPerConn: Math.round((m1.heap - m0.heap) / n), rssPerConn: Math.round((m1.rss - m0.rss) / n) });
  clients.kill();
  process.exit(0);
}

async function clientsArm(port: string, n: number): Promise<void> {
  const held: LeanClient[] = [];
  for (let i = 0; i < n; i++) {
    const c = new LeanClient({ index: i, url: `ws://127.0.0.1:${port}/cable?pi=60`, stream: 'heap-probe', localAddress: `127.0.0.${1 + (i % 50)}` }, leanAnyCable);
    await c.connect();
    held.push(c);
  }
  process.send!('done');
  setInterval(() => held.length, 60_000);
}

const mode = process.argv.indexOf('--arm');
const cl = process.argv.indexOf('--clients');
if (cl > 0) await clientsArm(process.argv[cl + 1]!, Number(process.argv[cl + 2]));
else if (mode > 0) await serverArm(process.argv[mode + 1] as Arm, Number(arg('n', '5000')));
else {
  const n = Number(arg('n', '5000'));
  const rounds = Number(arg('rounds', '2'));
  const runs: { arm: string; round: number; conns: number; heapPerConn: number; rssPerConn: number }[] = [];
  for (let round = 1; round <= rounds; round++) {
    for (const arm of ARMS) {
      const p = fork(new URL(import.meta.url), ['--arm', arm, '--n', String(n)], { execArgv: ['--import', 'tsx', '--expose-gc', '--max-semi-space-size=1'] });
      const r = await new Promise<{ conns: number; heapPerConn: number; rssPerConn: number }>((res, rej) => {
        p.on('message', (m) => res(m as never));
        p.on('exit', (code) => rej(new Error(`${arm} arm exited ${code}`)));
      });
      runs.push({ arm, round, ...r });
      process.stderr.write(`${arm} round ${round}: ${JSON.stringify(r)}\n`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const of = (arm: string, k: 'heapPerConn' | 'rssPerConn') => median(runs.filter((r) => r.arm === arm).map((r) => r[k]));
  const out = {
    commit: currentCommit(),
    command: `npx tsx bench/replay-conn-heap.ts ${process.argv.slice(2).join(' ')}`.trim(),
    measuredAt: new Date().toISOString(),
    n,
    results: runs,
    median: Object.fromEntries(ARMS.map((a) => [a, { heapPerConn: of(a, 'heapPerConn'), rssPerConn: of(a, 'rssPerConn') }])),
  };
  const file = arg('out', '');
  if (file) writeFileSync(file, JSON.stringify(out, null, 2) + '\n');
  process.stdout.write(JSON.stringify(out.median) + '\n');
}
