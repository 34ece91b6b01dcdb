/**
 * Ours, not Toxiproxy's: the embedded proxy stays on loopback unless told otherwise, has a
 * platform health check, and never stalls a connection after an oversized body.
 * Real TCP on port 0; every server here is in-process and closed after the suite.
 */
import { spawn } from 'node:child_process';
import { connect as tcpConnect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, startEchoServer, type TestTcpServer } from '../testing.ts';
import { createToxiproxyServer, type ToxiproxyServer } from './index.ts';

let echo: TestTcpServer;
let strict: ToxiproxyServer;
let open: ToxiproxyServer;

beforeAll(async () => {
  echo = await startEchoServer();
  [strict, open] = await Promise.all([createToxiproxyServer({ port: 0 }), createToxiproxyServer({ port: 0, allowPublic: true })]);
});
afterAll(async () => {
  await Promise.all([strict.close(), open.close(), echo.close()]);
});

let n = 0;
async function create(server: ToxiproxyServer, body: Record<string, unknown>) {
  const res = await fetch(`${server.url}/proxies`, { method: 'POST', body: JSON.stringify({ name: `exp${++n}`, ...body }) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe('loopback only by default', () => {
  it('wildcard listens ("", ":0", "0.0.0.0:0", "[::]:0", none) bind 127.0.0.1 and still forward', async () => {
    for (const listen of ['', ':0', '0.0.0.0:0', '[::]:0', undefined]) {
      const res = await create(strict, { upstream: `127.0.0.1:${echo.port}`, ...(listen === undefined ? {} : { listen }) });
      expect(res.status, String(listen)).toBe(201);
      expect(res.json.listen, String(listen)).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
      const s = await connect(res.json.listen as string);
      s.destroy();
    }
  });

  it('a non-loopback listen is refused with 400 naming the opt-in; that proxy is not created', async () => {
    const res = await create(strict, { listen: '192.0.2.1:0', upstream: `127.0.0.1:${echo.port}` });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/is not a loopback address: .*--allow-public/);
    const pop = await fetch(`${strict.url}/populate`, { method: 'POST', body: JSON.stringify([{ name: 'popok', listen: '127.0.0.1:0', upstream: `127.0.0.1:${echo.port}` }, { name: 'popbad', listen: '192.0.2.1:0', upstream: `127.0.0.1:${echo.port}` }]) });
    expect(pop.status).toBe(400);
    expect(Object.keys(await (await fetch(`${strict.url}/proxies`)).json())).not.toContain('popbad');
  });

  it('a non-loopback upstream is stored (create, update, populate) and refused at dial time: the client is closed and the refusal counted', async () => {
    const refused = async (name: string) => {
      const text = await (await fetch(`${strict.url}/metrics`)).text();
      const m = new RegExp(`rebound_chaos_proxy_refused_dials_total\\{proxy="${name}",[^}]*\\} (\\d+)`).exec(text);
      return Number(m?.[1]);
    };
    const upstreams = ['192.0.2.1:80', '[2001:db8::1]:80', '10.1.2.3:6379'];
    for (const upstream of upstreams) {
      const res = await create(strict, { listen: '127.0.0.1:0', upstream });
      expect(res.status, upstream).toBe(201);
      expect(res.json.upstream).toBe(upstream);
      const name = String(res.json.name);
      expect(await refused(name)).toBe(0);
      const s = await connect(res.json.listen as string);
      await new Promise((r) => s.once('close', r));
      expect(await refused(name), upstream).toBe(1);
    }
    // Update: a proxy moved to a public upstream keeps listening; each client is refused.
    const { json } = await create(strict, { listen: '127.0.0.1:0', upstream: `127.0.0.1:${echo.port}` });
    const up = await fetch(`${strict.url}/proxies/${String(json.name)}`, { method: 'POST', body: JSON.stringify({ upstream: '192.0.2.1:80' }) });
    expect(up.status).toBe(200);
    expect(((await up.json()) as { upstream: string; enabled: boolean })).toMatchObject({ upstream: '192.0.2.1:80', enabled: true });
    const s = await connect(json.listen as string);
    await new Promise((r) => s.once('close', r));
    expect(await refused(String(json.name))).toBe(1);
    const pop = await fetch(`${strict.url}/populate`, { method: 'POST', body: JSON.stringify([{ name: 'poppublic', listen: '127.0.0.1:0', upstream: '192.0.2.1:80' }]) });
    expect(pop.status).toBe(201);
    const health = (await (await fetch(`${strict.url}/health`)).json()) as { refusedDials: number };
    expect(health.refusedDials).toBeGreaterThanOrEqual(upstreams.length + 1);
  });

  it('an upstream that does not resolve (somehost:12345) is stored with 200 and dialled only when a client connects', async () => {
    const { json } = await create(strict, { listen: '127.0.0.1:0', upstream: `127.0.0.1:${echo.port}` });
    const name = String(json.name);
    const up = await fetch(`${strict.url}/proxies/${name}`, { method: 'POST', body: JSON.stringify({ enabled: true, listen: json.listen, upstream: 'somehost:12345' }) });
    expect(up.status).toBe(200);
    expect(await up.json()).toMatchObject({ name, upstream: 'somehost:12345', enabled: true, listen: json.listen });
    const failed = async () => Number(new RegExp(`rebound_chaos_proxy_failed_dials_total\\{proxy="${name}",[^}]*\\} (\\d+)`).exec(await (await fetch(`${strict.url}/metrics`)).text())?.[1]);
    expect(await failed()).toBe(0);
    const s = await connect(json.listen as string);
    await new Promise((r) => s.once('close', r));
    expect(await failed()).toBe(1);
  });

  it('a non-loopback API host needs the opt-in', async () => {
    await expect(createToxiproxyServer({ port: 0, host: '0.0.0.0' })).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID', details: { option: 'host' } });
    const pub = await createToxiproxyServer({ port: 0, host: '0.0.0.0', allowPublic: true });
    expect((await fetch(`http://127.0.0.1:${pub.port}/version`)).status).toBe(200);
    await pub.close();
  });

  it('with allowPublic, wildcards bind every interface and any upstream is accepted', async () => {
    const res = await create(open, { listen: '0.0.0.0:0', upstream: '192.0.2.1:80' });
    expect(res.status).toBe(201);
    expect(res.json.listen).toMatch(/^(\[::\]|0\.0\.0\.0):[1-9]\d*$/);
  });
});

describe('API edges', () => {
  it('GET /health answers 200 JSON (any user agent)', async () => {
    const res = await fetch(`${strict.url}/health`, { headers: { 'user-agent': 'Mozilla/5.0 RailwayHealthCheck' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(await res.json()).toMatchObject({ status: 'ok', service: 'chaos-proxy', proxies: expect.any(Number) });
  });

  it('after an oversized body the 400 closes the keep-alive connection instead of stalling it', async () => {
    const sock = tcpConnect(strict.port, '127.0.0.1');
    sock.on('error', () => {});
    let got = '';
    sock.on('data', (d: Buffer) => (got += d.toString('latin1')));
    const closed = new Promise<number>((resolve) => sock.once('close', () => resolve(Date.now())));
    await new Promise<void>((r) => sock.once('connect', () => r()));
    const body = Buffer.alloc(17 * 1024 * 1024, 0x78);
    sock.write(`POST /proxies HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
    sock.write(body);
    const t0 = Date.now();
    const at = await Promise.race([closed, new Promise<number>((r) => setTimeout(() => r(-1), 4000))]);
    sock.destroy();
    expect(at, 'server closed the socket').toBeGreaterThan(0);
    expect(at - t0).toBeLessThan(4000);
    expect(got).toMatch(/^HTTP\/1\.1 400 /);
    expect(got.toLowerCase()).toContain('connection: close');
    expect(got).toContain('request body too large');
  });
});

/** The standalone process as a platform runs it: PORT/HOST from the environment, no flags. */
function standalone(env: Record<string, string>) {
  const main = fileURLToPath(new URL('./main.ts', import.meta.url));
  const { TOXIPROXY_PORT: _p, TOXIPROXY_HOST: _h, REBOUND_ALLOW_PUBLIC: _a, ...rest } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', main], { env: { ...rest, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const url = new Promise<string | undefined>((resolve) => {
    child.stdout.on('data', () => {
      const m = /listening on (http:\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    void exited.then(() => resolve(undefined));
  });
  return { child, url, exited, stderr: () => err };
}

describe('standalone process on a platform (Railway: PORT, HOST, health check)', () => {
  it('PORT from the environment, GET /health 200, exit 0 on SIGTERM', async () => {
    const p = standalone({ PORT: '0' });
    const url = await p.url;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
    const res = await fetch(`${url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'ok', service: 'chaos-proxy' });
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  });

  it('signals the moment it prints its listening line (twice, as npm plus a user might) still exit 0', async () => {
    for (let i = 0; i < 3; i++) {
      const p = standalone({ PORT: '0' });
      await p.url;
      p.child.kill('SIGTERM');
      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
    }
  });

  it('HOST=0.0.0.0 needs REBOUND_ALLOW_PUBLIC=1: refused with RR_ERR_OPTION_INVALID without it, served with it', async () => {
    const refused = standalone({ PORT: '0', HOST: '0.0.0.0' });
    expect(await refused.exited).toBe(2);
    expect(refused.stderr()).toMatch(/RR_ERR_OPTION_INVALID.*host.*--allow-public/);
    const pub = standalone({ PORT: '0', HOST: '0.0.0.0', REBOUND_ALLOW_PUBLIC: '1' });
    const url = await pub.url;
    expect(url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    expect((await fetch(`http://127.0.0.1:${new URL(url!).port}/health`)).status).toBe(200);
    pub.child.kill('SIGTERM');
    expect(await pub.exited).toBe(0);
  });
});
