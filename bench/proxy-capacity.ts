/**
 * How many connections the embedded chaos proxy holds: the proxy runs as its own process (as
 * runners start it), each proxied connection costs it two sockets (client side and upstream), so
 * the ceiling is about (open-file limit − baseline) / 2. This opens connections through one proxy
 * until it stops accepting, checks every held one still echoes, and reports the count, the proxy's
 * RSS per connection and whether its API still answers.
 *
 *   npm run bench:proxy-capacity -- [--target 12000] [--rate 2000] [--json]
 *
 * Three processes: this one (clients, spread over 127.0.0.x), an upstream echo server, the proxy.
 */
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { parseCliOptions } from '../lib/cli.ts';
import type { OptionTable } from '../lib/options.ts';
import { reapOnExit } from '../lib/reaper.ts';
import { sleep } from '../lib/time.ts';
import { startEmbeddedProxy } from '../chaos/plans/proxies.ts';
import { createChaosProxy } from '../chaos/toxiproxy/client.ts';
import { sourceAddress } from '../engine/measure/addresses.ts';

const OPTIONS = {
  target: { type: 'int', min: 100, max: 19_000, default: 12_000, doc: 'connections to attempt (this process holds one fd each)' },
  rate: { type: 'int', min: 10, max: 20_000, default: 2000, doc: 'connection attempts per second' },
  json: { type: 'bool', default: false, doc: 'print only the JSON result' },
  role: { type: 'enum', values: ['main', 'upstream'], default: 'main', doc: 'internal: child role' },
} satisfies OptionTable;

function upstream(): void {
  const server = createServer((s) => {
    s.on('error', () => {});
    s.pipe(s);
  });
  server.on('error', () => {});
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, () => process.send!({ port: (server.address() as AddressInfo).port }));
}

const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
const fdsOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/limits`, 'utf8').match(/Max open files\s+(\d+)/)?.[1];
  } catch {
    return undefined;
  }
};

/** Open one connection and wait for its echo: it counts as held only if bytes made the round trip. */
function openOne(port: number, i: number): Promise<Socket | undefined> {
  return new Promise((resolve) => {
    const s = createConnection({ port, host: '127.0.0.1', localAddress: sourceAddress(i) });
    const done = (ok: boolean) => {
      clearTimeout(t);
      if (!ok) s.destroy();
      resolve(ok ? s : undefined);
    };
    const t = setTimeout(() => done(false), 10_000);
    s.on('error', () => done(false));
    s.on('close', () => done(false));
    s.once('connect', () => s.write('p'));
    s.once('data', () => done(true));
  });
}

async function main(): Promise<void> {
  const o = parseCliOptions(OPTIONS);
  if (o.role === 'upstream') return upstream();
  const log = (m: string) => process.stderr.write(m + '\n');
  const up = fork(new URL(import.meta.url).pathname, ['--role', 'upstream'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  reapOnExit(up);
  const upPort = await new Promise<number>((r) => up.once('message', (m: { port: number }) => r(m.port)));
  const proxyProc = await startEmbeddedProxy();
  const pid = proxyProc.child.pid!;
  const proxy = await createChaosProxy(proxyProc.url, { name: 'capacity', upstream: `127.0.0.1:${upPort}` });
  await sleep(500);
  const baseRss = rssOf(pid);
  log(`proxy pid ${pid} (open-file limit ${fdsOf(pid)}), baseline RSS ${(baseRss / 1048576).toFixed(1)} MB; opening up to ${o.target} at ${o.rate}/s`);
  const held: Socket[] = [];
  let failed = 0;
  let consecutiveFailures = 0;
  const t0 = Date.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < o.target && consecutiveFailures < 500; i++) {
    const due = t0 + (i * 1000) / o.rate;
    if (due > Date.now()) await sleep(due - Date.now());
    pending.push(
      openOne(proxy.port, i).then((s) => {
        if (s) {
          held.push(s);
          consecutiveFailures = 0;
        } else {
          failed++;
          consecutiveFailures++;
        }
      }),
    );
    if (i % 2000 === 1999) log(`  ${i + 1} attempted, ${held.length} held, ${failed} failed`);
  }
  await Promise.all(pending);
  await sleep(1000);
  // Every held connection must still carry bytes both ways.
  let alive = 0;
  await Promise.all(
    held.map(
      (s) =>
        new Promise<void>((resolve) => {
          const t = setTimeout(resolve, 5000);
          s.once('data', () => {
            alive++;
            clearTimeout(t);
            resolve();
          });
          s.write('q');
        }),
    ),
  );
  const peakRss = rssOf(pid);
  const apiOk = await fetch(`${proxyProc.url}/version`).then((r) => r.ok, () => false);
  const result = {
    date: new Date().toISOString(),
    attempted: held.length + failed,
    held: held.length,
    stillEchoing: alive,
    failed,
    proxyOpenFileLimit: Number(fdsOf(pid) ?? 0),
    proxySocketsPerConnection: 2,
    theoreticalCeiling: Math.floor(Number(fdsOf(pid) ?? 0) / 2),
    proxyBaselineRssMb: Math.round(baseRss / 104857.6) / 10,
    proxyPeakRssMb: Math.round(peakRss / 104857.6) / 10,
    proxyBytesPerConnection: held.length ? Math.round((peakRss - baseRss) / held.length) : 0,
    proxyApiAnswersAfter: apiOk,
    proxyProcessAlive: proxyProc.child.exitCode === null,
  };
  for (const s of held) s.destroy();
  proxyProc.child.kill('SIGTERM');
  up.kill('SIGTERM');
  if (o.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  else {
    process.stdout.write(
      `connections held through one proxy: ${result.held} of ${result.attempted} attempted (${result.stillEchoing} still echoing; ceiling ~${result.theoreticalCeiling} = ${result.proxyOpenFileLimit} fds / 2)\n` +
        `proxy RSS ${result.proxyBaselineRssMb} -> ${result.proxyPeakRssMb} MB (${result.proxyBytesPerConnection} B per connection); API answers after: ${result.proxyApiAnswersAfter}; process alive: ${result.proxyProcessAlive}\n`,
    );
  }
  process.exit(0);
}

void main();
