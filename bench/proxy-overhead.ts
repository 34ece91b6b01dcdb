/**
 * Embedded chaos proxy overhead: direct loopback vs through the proxy with no toxic, side by side.
 *
 *   npm run bench:proxy -- [--iterations 20000] [--seconds 3] [--rounds 3] [--json] [--toxiproxy-url URL]
 *
 * Separate processes so the proxy never shares an event loop with the load: this one (client),
 * an upstream child (echo + blast servers), the standalone proxy (`chaos/toxiproxy/main.ts`) and,
 * as a floor, a bare Node pipe forwarder.
 * - Round trip: one connection, 64-byte ping-pong, one message in flight; direct and proxied
 *   runs are interleaved over `rounds` to cancel drift. Added latency = proxied − direct.
 *   Round trips go into the runners' LatencyRecorder (engine/measure/latency.ts), so figures are
 *   whole µs.
 * - Throughput: one connection, the upstream writes 64 KiB chunks as fast as the socket drains;
 *   the client counts bytes for `seconds` after a 0.5 s warm-up.
 * - `--toxiproxy-url`: the same two proxies, no toxic, on a real Toxiproxy too (its own process,
 *   started by the user), so Rebound's per-hop cost stands next to Toxiproxy's in one run.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { OptionTable } from '../lib/options.ts';
import { parseCliOptions } from '../lib/cli.ts';
import { isAllowedTargetUrl } from '../engine/measure/addresses.ts';
import { createChaosProxy, type ChaosProxyHandle } from '../chaos/toxiproxy/client.ts';
import { ReboundError } from '../lib/errors.ts';
import { LatencyRecorder, mergeLatency, summarize, type EncodedLatency } from '../engine/measure/latency.ts';

const OPTIONS = {
  iterations: { type: 'int', min: 100, default: 20_000, doc: 'round trips per side per round' },
  seconds: { type: 'number', min: 0.5, default: 3, doc: 'throughput measurement window per side' },
  rounds: { type: 'int', min: 1, default: 3, doc: 'interleaved direct/proxied rounds' },
  json: { type: 'bool', default: false, doc: 'print only the JSON result' },
  toxiproxyUrl: { type: 'optional-string', default: undefined, doc: 'also measure a real Toxiproxy at this loopback API URL (a fourth side, interleaved like the others)' },
  role: { type: 'enum', values: ['main', 'upstream', 'pipe'], default: 'main', doc: 'internal: child process role' },
  echoPort: { type: 'int', min: 0, default: 0, doc: 'internal: pipe role upstream echo port' },
  blastPort: { type: 'int', min: 0, default: 0, doc: 'internal: pipe role upstream blast port' },
} satisfies OptionTable;

const MSG = Buffer.alloc(64, 0x61);
const BLAST = Buffer.alloc(64 * 1024, 0x62);

/** Child role: echo server and blast server on port 0; reports ports over IPC. */
async function upstream(): Promise<void> {
  const echo = createServer((s) => {
    s.setNoDelay(true);
    s.on('error', () => {});
    s.pipe(s);
  });
  const blast = createServer((s) => {
    s.on('error', () => {});
    s.once('data', () => {
      const pump = () => {
        while (!s.destroyed && s.write(BLAST));
      };
      s.on('drain', pump);
      pump();
    });
  });
  await Promise.all([new Promise<void>((r) => echo.listen(0, '127.0.0.1', r)), new Promise<void>((r) => blast.listen(0, '127.0.0.1', r))]);
  process.send!({ echo: (echo.address() as AddressInfo).port, blast: (blast.address() as AddressInfo).port });
  process.on('disconnect', () => process.exit(0));
}

/**
 * Child role: the floor, a bare `a.pipe(b); b.pipe(a)` TCP forwarder with no API and no toxic
 * chain, so the table separates Node's own socket cost from the proxy's.
 */
async function barePipe(echoPort: number, blastPort: number): Promise<void> {
  const forward = (port: number) =>
    createServer((c) => {
      const s = createConnection({ host: '127.0.0.1', port, noDelay: true });
      c.setNoDelay(true);
      c.on('error', () => s.destroy());
      s.on('error', () => c.destroy());
      c.pipe(s).pipe(c);
    });
  const servers = [forward(echoPort), forward(blastPort)];
  await Promise.all(servers.map((srv) => new Promise<void>((r) => srv.listen(0, '127.0.0.1', r))));
  process.send!({ echo: (servers[0]!.address() as AddressInfo).port, blast: (servers[1]!.address() as AddressInfo).port });
  process.on('disconnect', () => process.exit(0));
}

function dial(host: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = createConnection({ host, port, noDelay: true }, () => resolve(s));
    s.once('error', reject);
  });
}

/** `n` sequential 64-byte round trips, each into `rec` (the runners' one latency recorder, µs resolution). */
async function pingPong(host: string, port: number, n: number, rec: LatencyRecorder | undefined): Promise<void> {
  const s = await dial(host, port);
  await new Promise<void>((resolve, reject) => {
    let left = n;
    let got = 0;
    let t0 = process.hrtime.bigint();
    s.on('error', reject);
    s.on('data', (d: Buffer) => {
      got += d.length;
      if (got < MSG.length) return;
      got -= MSG.length;
      rec?.recordMs(Number(process.hrtime.bigint() - t0) / 1e6);
      if (--left === 0) return resolve();
      t0 = process.hrtime.bigint();
      s.write(MSG);
    });
    s.write(MSG);
  });
  s.destroy();
}

/** Bytes per second received from the blast server over `seconds`. */
async function throughput(host: string, port: number, seconds: number): Promise<number> {
  const s = await dial(host, port);
  let bytes = 0;
  s.on('data', (d: Buffer) => (bytes += d.length));
  s.write('go');
  await new Promise((r) => setTimeout(r, 500));
  const start = bytes;
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const rate = ((bytes - start) * 1000) / (performance.now() - t0);
  s.destroy();
  return rate;
}

/** Round-trip figures in µs from recorded round trips (whole µs: the recorder's resolution). */
function rtt(enc: EncodedLatency): { p50: number; p99: number; mean: number; count: number } {
  const r = summarize(enc).latencyRawMs;
  const us = (ms: number) => Math.round(ms * 1000);
  return { p50: us(r.p50), p99: us(r.p99), mean: us(r.avg), count: r.count };
}

async function startProxyProcess(): Promise<{ child: ChildProcess; url: string }> {
  const main = fileURLToPath(new URL('../chaos/toxiproxy/main.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', main, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  for await (const chunk of child.stdout!) {
    out += String(chunk);
    const m = /listening on (http:\S+)/.exec(out);
    if (m) return { child, url: m[1]! };
  }
  throw new Error(`proxy process exited before listening: ${out}`);
}

async function main(): Promise<void> {
  // --help and a bad flag end here (usage / coded error, exit 0 / 2), never as a stack trace.
  const opts = parseCliOptions(OPTIONS);
  if (opts.role === 'upstream') return upstream();
  if (opts.role === 'pipe') return barePipe(opts.echoPort, opts.blastPort);
  const log = (s: string) => (opts.json ? process.stderr : process.stdout).write(`${s}\n`);
  const real = opts.toxiproxyUrl?.replace(/\/$/, '');
  if (real !== undefined && !isAllowedTargetUrl(real)) {
    const err = new ReboundError('RR_ERR_OPTION_INVALID', `toxiproxy-url must be a loopback http URL; got ${JSON.stringify(opts.toxiproxyUrl)}`, { details: { option: 'toxiproxyUrl' } });
    process.stderr.write(`error ${err.code}: ${err.message}\n`);
    process.exit(2);
  }

  const up = fork(fileURLToPath(import.meta.url), ['--role', 'upstream'], { execArgv: ['--import', 'tsx'] });
  const [ports] = (await once(up, 'message')) as [{ echo: number; blast: number }];
  const pipe = fork(fileURLToPath(import.meta.url), ['--role', 'pipe', '--echo-port', String(ports.echo), '--blast-port', String(ports.blast)], { execArgv: ['--import', 'tsx'] });
  const [pipePorts] = (await once(pipe, 'message')) as [{ echo: number; blast: number }];
  const { child: proxyProc, url } = await startProxyProcess();
  const realProxies: ChaosProxyHandle[] = [];
  try {
    const echoProxy = await createChaosProxy(url, { name: 'bench_echo', upstream: `127.0.0.1:${ports.echo}` });
    const blastProxy = await createChaosProxy(url, { name: 'bench_blast', upstream: `127.0.0.1:${ports.blast}` });
    const side = (echo: number, blast: number) => ({ echo, blast, rounds: [] as EncodedLatency[], rates: [] as number[], roundP50s: [] as number[] });
    const sides: Record<string, ReturnType<typeof side>> = {
      direct: side(ports.echo, ports.blast),
      barePipe: side(pipePorts.echo, pipePorts.blast),
      proxied: side(echoProxy.port, blastProxy.port),
    };
    if (real !== undefined) {
      for (const [name, port] of [['bench_echo', ports.echo], ['bench_blast', ports.blast]] as const) realProxies.push(await createChaosProxy(real, { name: `${name}_${process.pid}`, upstream: `127.0.0.1:${port}` }));
      sides.toxiproxy = side(realProxies[0]!.port, realProxies[1]!.port);
    }
    for (const side of Object.values(sides)) await pingPong('127.0.0.1', side.echo, 2000, undefined); // warm-up
    for (let round = 1; round <= opts.rounds; round++) {
      for (const [name, side] of Object.entries(sides)) {
        const roundRec = new LatencyRecorder();
        await pingPong('127.0.0.1', side.echo, opts.iterations, roundRec);
        side.rounds.push(roundRec.encode());
        side.roundP50s.push(rtt(side.rounds.at(-1)!).p50);
        side.rates.push(await throughput('127.0.0.1', side.blast, opts.seconds));
        log(`round ${round} ${name.padEnd(8)} rtt p50 ${side.roundP50s.at(-1)} µs, ${(side.rates.at(-1)! / 1e6).toFixed(0)} MB/s`);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const summary = (s: ReturnType<typeof side>) => ({
      rttUs: rtt(mergeLatency(s.rounds)),
      throughputMBps: Math.round(median(s.rates) / 1e5) / 10,
    });
    const direct = summary(sides.direct!);
    const barePipe = summary(sides.barePipe!);
    const proxied = summary(sides.proxied!);
    const toxiproxy = sides.toxiproxy ? summary(sides.toxiproxy) : undefined;
    const added = (s: ReturnType<typeof summary>) => ({ p50: Math.round((s.rttUs.p50 - direct.rttUs.p50) * 10) / 10, p99: Math.round((s.rttUs.p99 - direct.rttUs.p99) * 10) / 10 });
    const byRound = (s: ReturnType<typeof side>) => s.roundP50s.map((p, i) => Math.round((p - sides.direct!.roundP50s[i]!) * 10) / 10);
    const result = {
      command: `npm run bench:proxy -- --iterations ${opts.iterations} --seconds ${opts.seconds} --rounds ${opts.rounds}${real !== undefined ? ` --toxiproxy-url ${real}` : ''}`,
      date: new Date().toISOString(),
      node: process.version,
      direct,
      barePipe,
      proxied,
      barePipeAddedRttUs: added(barePipe),
      /** Per round, proxied p50 − direct p50: interleaving cancels drift, so these are the steadiest view. */
      addedRttP50ByRoundUs: byRound(sides.proxied!),
      addedRttUs: added(proxied),
      throughputRatio: Math.round((proxied.throughputMBps / direct.throughputMBps) * 1000) / 1000,
      ...(toxiproxy
        ? {
            /** The real Toxiproxy at --toxiproxy-url, same two connections, no toxic. */
            toxiproxy,
            toxiproxyAddedRttUs: added(toxiproxy),
            toxiproxyAddedRttP50ByRoundUs: byRound(sides.toxiproxy!),
            toxiproxyThroughputRatio: Math.round((toxiproxy.throughputMBps / direct.throughputMBps) * 1000) / 1000,
          }
        : {}),
      goals: { addedRttP50MaxUs: 100, throughputRatioMin: 0.5 },
    };
    const pass = { rtt: result.addedRttUs.p50 <= 100, tput: result.throughputRatio >= 0.5 };
    if (!opts.json) {
      log('');
      log('| | direct | bare Node pipe (floor) | chaos proxy, no toxic | proxy added / ratio | goal |');
      log('|---|---:|---:|---:|---:|---|');
      log(`| RTT p50 (µs) | ${direct.rttUs.p50} | ${barePipe.rttUs.p50} | ${proxied.rttUs.p50} | +${result.addedRttUs.p50} | ≤ 100 µs ${pass.rtt ? 'met' : 'MISSED'} |`);
      log(`| RTT p99 (µs) | ${direct.rttUs.p99} | ${barePipe.rttUs.p99} | ${proxied.rttUs.p99} | +${result.addedRttUs.p99} | |`);
      log(`| Throughput (MB/s, median) | ${direct.throughputMBps} | ${barePipe.throughputMBps} | ${proxied.throughputMBps} | ${(result.throughputRatio * 100).toFixed(1)} % | ≥ 50 % ${pass.tput ? 'met' : 'MISSED'} |`);
      log('');
      if (toxiproxy) {
        const t = added(toxiproxy);
        log(`real Toxiproxy (${real}), no toxic: RTT p50 ${toxiproxy.rttUs.p50} µs (+${t.p50}), p99 ${toxiproxy.rttUs.p99} µs (+${t.p99}), ${toxiproxy.throughputMBps} MB/s (${((toxiproxy.throughputMBps / direct.throughputMBps) * 100).toFixed(1)} %)`);
        log('');
      }
    }
    process.stdout.write(`${JSON.stringify(result, null, opts.json ? 2 : 0)}\n`);
  } finally {
    // A shared real Toxiproxy: remove only what this run created.
    await Promise.allSettled(realProxies.map((p) => p.remove()));
    proxyProc.kill('SIGTERM');
    up.disconnect();
    pipe.disconnect();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
