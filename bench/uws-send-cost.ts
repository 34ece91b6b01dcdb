/**
 * What one WebSocket send costs a uWS server on loopback, by frame: the uWS reference server's S3
 * frame (85 bytes), the replay server's AnyCable broadcast frame for the same message (182 bytes),
 * and that frame with a due ping riding in the same write (uWS cork, connection/ping.ts). Nothing
 * but the sends runs in the server, so the figure is uWS's native send and the kernel's loopback
 * path: what bench/replay-transport-cost.ts's per-delivery CPU is made of before any server code.
 *
 *   npm run bench:uws-send-cost -- [--rounds 5] [--phase-ms 5000] [--rate 60000] [--connections 10000] [--out FILE]   (--help: every option)
 *
 * The server holds `--connections` WebSocket clients (`ws`, in two child processes from 127.0.0.2
 * and 127.0.0.3, reading and dropping every frame: bench/uws-send-cost-client.ts) and sends `--rate` frames per second to them in
 * turn, each phase `--phase-ms` long; rounds alternate the three frames after a warm-up phase.
 * Prints the median server CPU (user + system, every thread) per send of each frame and the ratios
 * to the reference frame, per round too; `--out` writes that as JSON (the figure-file shape of
 * docs/results/).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseCliOptions, runCli } from '../lib/cli.ts';
import { ReboundError } from '../lib/errors.ts';
import { medianOf } from '../lib/figures.ts';
import type { OptionTable } from '../lib/options.ts';
import { currentCommit } from '../engine/measure/summary.ts';
import { commandLine } from '../engine/pages/command.ts';
import { loadUws, type UwsSocket } from '../services/uws/load.ts';

export const OPTIONS = {
  rounds: { type: 'int', default: 5, min: 1, max: 50, doc: 'rounds; each sends every frame for one phase, frames interleaved' },
  phaseMs: { type: 'int', default: 5000, min: 500, max: 60_000, doc: 'length of one phase, ms' },
  rate: { type: 'int', default: 60_000, min: 100, max: 200_000, doc: 'sends per second, over all connections in turn' },
  // Two client processes of at most 10,000 each: a process opens at most 20,000 files here.
  connections: { type: 'int', default: 10_000, min: 2, max: 20_000, doc: 'WebSocket connections held, half in each of two client processes' },
  out: { type: 'optional-string', default: undefined, doc: 'write the summary JSON here (the figure-file shape of docs/results/)' },
} as const satisfies OptionTable;

const READY_TIMEOUT_MS = 60_000;
const CLIENT = fileURLToPath(new URL('./uws-send-cost-client.ts', import.meta.url));

async function main(argv: string[]): Promise<number> {
  const o = parseCliOptions(OPTIONS, argv);
  const { rounds, phaseMs, rate, connections } = o;
  const loaded = loadUws();
  if (!loaded.ok) throw new ReboundError('RR_ERR_TARGET_UNAVAILABLE', loaded.reason);
  const { uws } = loaded;
  const socks: UwsSocket<object>[] = [];
  const app = uws.App();
  let measuring = false;
  app.ws<object>('/*', {
    idleTimeout: 0,
    sendPingsAutomatically: false,
    compression: 0,
    maxBackpressure: 1 << 30,
    open: (ws) => void socks.push(ws),
    // A send on a closed uWS socket throws: a connection lost while measuring ends the run, said so.
    close: () => {
      if (!measuring) return;
      console.error('a client connection closed during the measurement');
      stop(1);
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    app.listen('127.0.0.1', 0, 1, (token) => (token ? resolve(uws.us_socket_local_port(token)) : reject(new Error('uWS could not listen')))),
  );
  const half = Math.ceil(connections / 2);
  const kids: ChildProcess[] = [0, 1].map((i) => fork(CLIENT, [String(port), String(i === 0 ? half : connections - half), `127.0.0.${2 + i}`], { execArgv: ['--import', 'tsx'] }));
  function stop(code: number): void {
    measuring = false;
    for (const k of kids) k.kill();
    process.exit(code);
  }
  const ready = Promise.all(kids.map((k) => new Promise((resolve, reject) => (k.once('message', resolve), k.once('exit', (c) => reject(new Error(`a client process exited (${c})`)))))));
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error(`clients not connected within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS).unref());
  await Promise.race([ready, timeout]).catch((e: Error) => (console.error(e.message), stop(1)));
  measuring = true;

  const message = { k: 'bench-123', seq: 123456, t: Date.now() };
  const reference = Buffer.from(JSON.stringify({ stream: 's3-123', data: JSON.stringify(message) }));
  const anycable = Buffer.from(JSON.stringify({ identifier: JSON.stringify({ channel: '$pubsub', stream_name: 's3-123' }), message, stream_id: 's3-123', epoch: 'abcd-1', offset: 123456 }));
  const ping = Buffer.from(JSON.stringify({ type: 'ping', message: Math.floor(Date.now() / 1000) }));
  const frames = {
    reference: (ws: UwsSocket<object>) => void ws.send(reference, false),
    anycable: (ws: UwsSocket<object>) => void ws.send(anycable, false),
    'anycable+ping': (ws: UwsSocket<object>) =>
      void ws.cork(() => {
        ws.send(ping, false);
        ws.send(anycable, false);
      }),
  };
  type Frame = keyof typeof frames;

  /** One phase: `rate` sends per second for `phaseMs`, the sockets in turn; server CPU µs per send. */
  const phase = (send: (ws: UwsSocket<object>) => void) =>
    new Promise<number>((resolve) => {
      let sent = 0;
      let k = 0;
      const cpu0 = process.cpuUsage();
      const t0 = Date.now();
      const tick = () => {
        const elapsed = Date.now() - t0;
        const due = Math.min(Math.floor((elapsed * rate) / 1000), Math.ceil((phaseMs * rate) / 1000));
        for (; sent < due; sent++) send(socks[(k = (k + 7919) % socks.length)]!);
        if (elapsed < phaseMs) return void setTimeout(tick, 1);
        const c = process.cpuUsage(cpu0);
        resolve((c.user + c.system) / sent);
      };
      tick();
    });

  await phase(frames.reference); // warm-up
  const runs: Record<Frame, number[]> = { reference: [], anycable: [], 'anycable+ping': [] };
  for (let r = 0; r < rounds; r++) for (const f of Object.keys(frames) as Frame[]) runs[f].push(await phase(frames[f]));
  // Never empty: one run per round, at least one round.
  const median = (a: number[]) => medianOf(a)!;
  const r3 = (n: number) => Math.round(n * 1000) / 1000;
  const names = Object.keys(frames) as Frame[];
  const per = <T>(f: (name: Frame) => T) => Object.fromEntries(names.map((n) => [n, f(n)])) as Record<Frame, T>;
  const ratios = per((n) => runs[n].map((x, i) => x / runs.reference[i]!));
  const summary = {
    rounds,
    phaseMs,
    sendsPerSec: rate,
    connections: socks.length,
    frameBytes: { reference: reference.length, anycable: anycable.length, 'anycable+ping': ping.length + anycable.length },
    usPerSend: per((n) => r3(median(runs[n]))),
    perRound: per((n) => runs[n].map(r3)),
    ratioToReference: per((n) => r3(median(ratios[n]))),
    perRoundRatios: per((n) => ratios[n].map(r3)),
  };
  console.log(`server CPU per send, ${socks.length} connections, ${rate}/s, median of ${rounds} rounds of ${phaseMs} ms`);
  for (const n of names) {
    console.log(`${n.padEnd(14)} ${String(summary.frameBytes[n]).padStart(4)} B  ${summary.usPerSend[n]} µs (${summary.perRound[n].join(' / ')})  ratio ${summary.ratioToReference[n]} (${summary.perRoundRatios[n].join(' / ')})`);
  }
  const command = commandLine('bench:uws-send-cost', OPTIONS, o);
  if (o.out) writeFileSync(o.out, `${JSON.stringify({ commit: currentCommit(), command, measuredAt: new Date().toISOString(), results: [summary] }, null, 2)}\n`);
  stop(0);
  return 0;
}

runCli(main);
