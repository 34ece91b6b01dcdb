import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { api, startRunner, tempResultsDir, type RunnerProcess } from './testing.ts';

/**
 * A target URL with credentials (`http://user:pw@host`): the clients and the publisher connect
 * with them, and nothing the runner stores, answers, logs or renders shows them.
 */
const TOKEN = 'redact-token-0123456789abcdef';
const SECRET = 'pw-s3cret';
const BASIC = `Basic ${Buffer.from(`user:${SECRET}`).toString('base64')}`;

/** A real reverse proxy in front of the ws service that refuses (401) every request and upgrade without the credentials. */
async function authProxy(upstream: URL): Promise<{ port: number; refused: () => number; server: Server }> {
  let refused = 0;
  const server = createServer((req, res) => {
    if (req.headers.authorization !== BASIC) {
      refused++;
      res.writeHead(401).end();
      return;
    }
    const up = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  server.on('upgrade', (req, socket, head) => {
    if (req.headers.authorization !== BASIC) {
      refused++;
      socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const up = connect(Number(upstream.port), upstream.hostname, () => {
      up.write(`${req.method} ${req.url} HTTP/1.1\r\n${Object.entries(req.headers).map(([k, v]) => `${k}: ${String(v)}`).join('\r\n')}\r\n\r\n`);
      up.write(head);
      socket.pipe(up).pipe(socket);
    });
    up.on('error', () => socket.destroy());
    socket.on('error', () => up.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, refused: () => refused, server };
}

const filesUnder = (dir: string): string[] => readdirSync(dir).flatMap((f) => (statSync(join(dir, f)).isDirectory() ? filesUnder(join(dir, f)) : [join(dir, f)]));

describe('runner: credentials in a target URL', () => {
  let ws: ServiceHandle;
  let proxy: Awaited<ReturnType<typeof authProxy>>;
  let runner: RunnerProcess;
  const dir = tempResultsDir();
  beforeAll(async () => {
    ws = await startService('ws');
    proxy = await authProxy(new URL(ws.httpUrl));
    runner = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: dir, TARGET_URL_ALLOW: '127.0.0.1:*' });
  }, 60_000);
  afterAll(async () => {
    await runner?.stop();
    proxy?.server.close();
    await ws?.stop();
  });

  it('are used for the connection (the target requires them) and appear nowhere: answer, job record, job list, log, result file, report, stderr', async () => {
    const r = await api(runner.url, `/bench-jitter-ws?n=2&msgs=3&interval=20&jitter=0&settle=500&httpUrl=http://user:${SECRET}@127.0.0.1:${proxy.port}`, { method: 'POST', token: TOKEN });
    expect(r.status, JSON.stringify(r.body).slice(0, 400)).toBe(200);
    // The target refused nothing: every client and every publish carried the credentials.
    expect(r.body).toMatchObject({ published: 3, expectedDeliveries: 6, receivedDeliveries: 6 });
    expect(proxy.refused()).toBe(0);
    expect(r.body.params.url).toBe(`http://***@127.0.0.1:${proxy.port}`);
    const id = r.body.jobId as string;
    const shown = [
      JSON.stringify(r.body),
      JSON.stringify((await api(runner.url, `/jobs/${id}?logLines=500`, { token: TOKEN })).body),
      JSON.stringify((await api(runner.url, '/jobs?limit=500', { token: TOKEN })).body),
      JSON.stringify((await api(runner.url, `/results/${id}`, { token: TOKEN })).body),
      String((await api(runner.url, `/reports/${id}`, { token: TOKEN })).body),
      ...filesUnder(dir).map((f) => readFileSync(f, 'utf8')),
      runner.stderr(),
    ];
    expect(shown.join('\n')).toContain(`***@127.0.0.1:${proxy.port}`);
    for (const text of shown) expect(text).not.toContain(SECRET);
  }, 60_000);

  it('a refused URL with credentials is not echoed with them (outside the allowlist, or no URL at all)', async () => {
    for (const url of [`http://user:${SECRET}@10.0.0.1:1`, `http://user:${SECRET}@`]) {
      const r = await api(runner.url, `/bench-jitter-ws?n=1&httpUrl=${encodeURIComponent(url)}`, { method: 'POST', token: TOKEN });
      expect(r.status, url).toBe(400);
      expect(r.body.code, url).toBe('RR_ERR_TARGET_URL_REFUSED');
      expect(JSON.stringify(r.body), url).not.toContain(SECRET);
    }
  });
});
