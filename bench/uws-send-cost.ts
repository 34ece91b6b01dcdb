/**
 * What one WebSocket send costs a uWS server on loopback, by frame: the uWS reference server's S3
 * frame (85 bytes), the replay server's AnyCable broadcast frame for the same message (182 bytes),
 * and that frame with a due ping riding in the same write (uWS cork, connection/ping.ts). Nothing
 * but the sends runs in the server, so the figure is uWS's native send and the kernel's loopback
 * path: what bench/replay-transport-cost.ts's per-delivery CPU is made of before any server code.
 *
 *   npx tsx bench/uws-send-cost.ts [--rounds 5] [--phase-ms 5000] [--rate 60000] [--connections 10000] [--out FILE]
 *
 * The server holds `--connections` WebSocket clients (`ws`, in two child processes from 127.0.0.2
 * and 127.0.0.3, reading and dropping every frame) and sends `--rate` frames per second to them in
 * turn, each phase `--phase-ms` long; rounds alternate the three frames after a warm-up phase.
 * Prints the median server CPU (user + system, every thread) per send of each frame and the ratios
 * to the reference frame, per round too; `--out` writes that as JSON (the figure-file shape of
 * docs/results/).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { currentCommit } from '../engine/measure/summary.ts';
import { loadUws, type UwsSocket } from '../services/uws/load.ts';

const { values } = parseArgs({
  options: {
    role: { type: 'string', default: 'server' },
    port: { type: 'string' },
    count: { type: 'string' },
    host: { type: 'string' },
    rounds: { type: 'string', default: '5' },
    'phase-ms': { type: 'string', default: '5000' },
    rate: { type: 'string', default: '60000' },
    connections: { type: 'string', default: '10000' },
    out: { type: 'string' },
  },
});

/** An integer option within bounds, or a clear error. */
function int(name: string, v: string | undefined, min: number, max: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer from ${min} to ${max} (got ${v})`);
  return n;
}

const READY_TIMEOUT_MS = 60_000;

if (values.role === 'client') {
  // One of the two client processes: open `count` connections, read and drop every frame.
  const { default: WebSocket } = await import('ws');
  const port = int('port', values.port, 1, 65535);
  const count = int('count', values.count, 1, 10_000);
  let open = 0;
  for (let i = 0; i < count; i++) {
    const c = new WebSocket(`ws://127.0.0.1:${port}/`, { localAddress: values.host, perMessageDeflate: false });
    c.on('open', () => void (++open === count && process.send!('ready')));
    c.on('error', (e) => {
      console.error(`client: ${e.message}`);
      process.exit(1);
    });
    // Paced: a burst of thousands of SYNs overflows the listen backlog.
    if (i % 200 === 199) await new Promise((r) => setTimeout(r, 20));
  }
} else {
  const rounds = int('rounds', values.rounds, 1, 50);
  const phaseMs = int('phase-ms', values['phase-ms'], 500, 60_000);
  const rate = int('rate', values.rate, 100, 200_000);
  const connections = int('connections', values.connections, 2, 20_000);
  const loaded = loadUws();
  if (!loaded.ok) throw new Error(loaded.reason);
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
  const self = fileURLToPath(import.meta.url);
  const half = Math.ceil(connections / 2);
  const kids: ChildProcess[] = [0, 1].map((i) =>
    fork(self, ['--role', 'client', '--port', String(port), '--count', String(i === 0 ? half : connections - half), '--host', `127.0.0.${2 + i}`], { execArgv: ['--import', 'tsx'] }),
  );
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
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!;
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
  const defaults = { rounds: 5, 'phase-ms': 5000, rate: 60_000, connections: 10_000 };
  const given = { rounds, 'phase-ms': phaseMs, rate, connections };
  const command = ['npx tsx bench/uws-send-cost.ts', ...Object.entries(given).flatMap(([k, v]) => (v !== defaults[k as keyof typeof defaults] ? [`--${k}`, String(v)] : []))].join(' ');
  if (values.out) writeFileSync(values.out, `${JSON.stringify({ commit: currentCommit(), command, measuredAt: new Date().toISOString(), results: [summary] }, null, 2)}\n`);
  stop(0);
}
