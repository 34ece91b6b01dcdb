import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { urlMatchesPattern } from '../../engine/measure/addresses.ts';
import { createRunnerApp } from './app.ts';
import { isPrivateAddress, resolveTarget } from './targets.ts';
import { api, startRunner, tempResultsDir, waitJob, type RunnerProcess } from './testing.ts';

const TOKEN = 'targets-token-0123456789abcdef';
const SMALL = 'n=3&msgs=5&interval=50&jitter=0&settle=500&seed=7';
const LAT = 'n=3&msgs=5&interval=50&settle=500&seed=7';

describe('TARGET_URL_ALLOW patterns', () => {
  it('matches host, *.suffix and port forms; a pattern without a port admits only the default port', () => {
    expect(urlMatchesPattern('http://api.railway.internal:8080', '*.railway.internal:*')).toBe(true);
    expect(urlMatchesPattern('http://railway.internal', '*.railway.internal')).toBe(false);
    expect(urlMatchesPattern('http://api.railway.internal', '*.railway.internal')).toBe(true);
    expect(urlMatchesPattern('http://api.railway.internal:6379', '*.railway.internal')).toBe(false);
    expect(urlMatchesPattern('ws://127.0.0.1:9000/cable', '127.0.0.1:*')).toBe(true);
    expect(urlMatchesPattern('ws://127.0.0.1:9000/cable', '127.0.0.1:9001')).toBe(false);
    expect(urlMatchesPattern('ftp://127.0.0.1:9000', '127.0.0.1:*')).toBe(false);
    expect(urlMatchesPattern('http://evilrailway.internal', '*.railway.internal')).toBe(false);
  });

  it('private-network addresses only (never loopback, link-local or public)', () => {
    for (const a of ['10.1.2.3', '172.16.0.1', '192.168.1.1', '100.64.0.1', 'fd12:3456::1']) expect(isPrivateAddress(a), a).toBe(true);
    for (const a of ['127.0.0.1', '169.254.169.254', '8.8.8.8', '::1', 'fe80::1', '0.0.0.0']) expect(isPrivateAddress(a), a).toBe(false);
  });

  it("resolves the benchmark's parameters per target and refuses ones that do not apply", () => {
    const env = { TARGET_URL_ALLOW: '127.0.0.1:*' };
    expect(resolveTarget('anycable', env, { cableUrl: 'ws://127.0.0.1:8080/cable', broadcastUrl: 'http://127.0.0.1:8090/_broadcast' })).toMatchObject({ source: 'request', server: 'anycable', url: 'ws://127.0.0.1:8080/cable', broadcastUrl: 'http://127.0.0.1:8090/_broadcast' });
    // cableUrl alone (the benchmark's idle and whispers drivers): publish to /_broadcast on the cable's origin.
    expect(resolveTarget('anycable', env, { cableUrl: 'ws://127.0.0.1:8080/cable' })).toMatchObject({ url: 'ws://127.0.0.1:8080/cable', broadcastUrl: 'http://127.0.0.1:8080/_broadcast' });
    expect(() => resolveTarget('anycable', env, { broadcastUrl: 'http://127.0.0.1:8090/_broadcast' })).toThrow(/needs cableUrl/);
    expect(resolveTarget('uws', env, { wsUrl: 'ws://127.0.0.1:3000/ws' })).toMatchObject({ url: 'http://127.0.0.1:3000' });
    expect(() => resolveTarget('socketio', env, { wsUrl: 'ws://127.0.0.1:1' })).toThrow(/takes serverUrl/);
    expect(() => resolveTarget('uws', env, { wsUrl: 'ws://127.0.0.1:1', httpUrl: 'http://127.0.0.1:2' })).toThrow(/one server/);
    // The configured target's own origin is always allowed, without TARGET_URL_ALLOW; the key follows only there.
    const conf = { REBOUND_ALLOW_REMOTE_TARGETS: '1', TARGET_SOCKETIO_URL: 'http://10.0.0.5:3000', TARGET_SOCKETIO_BROADCAST_KEY: 'k' };
    expect(resolveTarget('socketio', conf, { serverUrl: 'http://10.0.0.5:3000' })).toMatchObject({ source: 'request', url: 'http://10.0.0.5:3000', broadcastKey: 'k' });
    expect(() => resolveTarget('socketio', conf, { serverUrl: 'http://10.0.0.5:3001' })).toThrow(/serverUrl "http:\/\/10.0.0.5:3001" is outside the allowlist/);
    // anycable without a configured URL: the local replay server.
    expect(resolveTarget('anycable', {})).toMatchObject({ source: 'local', server: 'replay' });
    // uws is its own server (services/uws), no longer an alias of ws.
    expect(resolveTarget('uws', {})).toMatchObject({ source: 'local', server: 'uws', definition: { name: 'uws', service: { name: 'uws' } } });
  });

  it('uws where its binary does not load: refused with the reason, before any job starts', () => {
    const saved = process.env.UWS_MODULE;
    process.env.UWS_MODULE = '/nonexistent/uWebSockets.js';
    try {
      expect(() => resolveTarget('uws', {})).toThrow(/target "uws" is not installed here: uWebSockets\.js not installed here \(\/nonexistent\/uWebSockets\.js\)/);
      // A configured URL needs no local binary.
      expect(resolveTarget('uws', { TARGET_UWS_URL: 'http://127.0.0.1:9' })).toMatchObject({ source: 'configured', server: 'uws' });
    } finally {
      if (saved === undefined) delete process.env.UWS_MODULE;
      else process.env.UWS_MODULE = saved;
    }
  });
});

describe('runner: targets by URL within the allowlist', () => {
  let runner: RunnerProcess;
  let ws: ServiceHandle;
  let sio: ServiceHandle;
  beforeAll(async () => {
    [ws, sio] = await Promise.all([startService('uws'), startService('socketio')]);
    runner = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir(), TARGET_URL_ALLOW: '127.0.0.1:*,localhost:*' });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([runner?.stop(), ws?.stop(), sio?.stop()]);
  });

  it("runs against an allowlisted wsUrl+httpUrl and says which server answered", async () => {
    const port = new URL(ws.httpUrl).port;
    const r = await api(runner.url, `/bench-jitter-uws?${SMALL}&wsUrl=ws://127.0.0.1:${port}&httpUrl=http://127.0.0.1:${port}`, { method: 'POST', token: TOKEN });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ targetServer: 'uws', targetSource: 'request', receivedDeliveries: 15 });
    expect(r.body.effectiveParams).toMatchObject({ targetSource: 'request' });
  }, 60_000);

  it('runs against an allowlisted serverUrl', async () => {
    const r = await api(runner.url, `/bench-latency-socketio?${LAT}&serverUrl=${encodeURIComponent(sio.httpUrl)}`, { method: 'POST', token: TOKEN });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ targetServer: 'socketio', targetSource: 'request' });
  }, 60_000);

  it('refuses a URL outside the allowlist with 400 naming the parameter and the allowlist', async () => {
    const r = await api(runner.url, `/bench-jitter-socketio?${SMALL}&serverUrl=http://10.9.9.9:3000`, { method: 'POST', token: TOKEN });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'RR_ERR_TARGET_URL_REFUSED', details: { option: 'serverUrl' } });
    expect(r.body.message).toContain('TARGET_URL_ALLOW (127.0.0.1:*, localhost:*)');
  });

  it('checks what an allowlisted name resolves to (DNS rebinding): localhost → 127.0.0.1 is allowed only because 127.0.0.1:* is', async () => {
    const port = new URL(ws.httpUrl).port;
    const ok = await api(runner.url, `/bench-jitter-ws?${SMALL}&httpUrl=http://localhost:${port}`, { method: 'POST', token: TOKEN });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const narrow = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir(), TARGET_URL_ALLOW: 'localhost:*' });
    try {
      const start = await api(narrow.url, `/bench-jitter-ws?${SMALL}&httpUrl=http://localhost:${port}&async=1`, { method: 'POST', token: TOKEN });
      expect(start.status, JSON.stringify(start.body)).toBe(202);
      const job = await waitJob(narrow.url, start.body.jobId, TOKEN);
      expect(job.status).toBe('failed');
      expect(JSON.stringify(job)).toMatch(/resolves to (127\.0\.0\.1|::1).*DNS rebinding/);
    } finally {
      await narrow.stop();
    }
  }, 60_000);

  it("an embedded runner checks what a name resolves to against its own env, not the process's", async () => {
    const port = new URL(ws.httpUrl).port;
    const post = async (env: Record<string, string>) => {
      const { app } = createRunnerApp({ token: TOKEN, resultsDir: tempResultsDir(), env });
      const server = app.listen(0, '127.0.0.1');
      await once(server, 'listening');
      try {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        return await api(base, `/bench-jitter-ws?${SMALL}&httpUrl=http://localhost:${port}`, { method: 'POST', token: TOKEN });
      } finally {
        server.close();
      }
    };
    const saved = process.env.TARGET_URL_ALLOW;
    delete process.env.TARGET_URL_ALLOW;
    try {
      // Its env admits 127.0.0.1:*, the process's allows nothing: localhost → 127.0.0.1 runs.
      const ok = await post({ TARGET_URL_ALLOW: 'localhost:*,127.0.0.1:*' });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body).toMatchObject({ targetSource: 'request' });
      // Its env admits the name alone; the process's wider allowlist does not let the address through.
      process.env.TARGET_URL_ALLOW = 'localhost:*,127.0.0.1:*';
      const refused = await post({ TARGET_URL_ALLOW: 'localhost:*' });
      expect(refused.body).toMatchObject({ code: 'RR_ERR_TARGET_URL_REFUSED' });
      expect(refused.body.message).toMatch(/resolves to (127\.0\.0\.1|::1).*DNS rebinding/);
    } finally {
      if (saved === undefined) delete process.env.TARGET_URL_ALLOW;
      else process.env.TARGET_URL_ALLOW = saved;
    }
  }, 60_000);

  it('anycable without TARGET_ANYCABLE_URL runs on the local replay server', async () => {
    const r = await api(runner.url, `/bench-latency-anycable?${LAT}`, { method: 'POST', token: TOKEN });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ targetServer: 'replay', targetSource: 'local' });
    expect((await api(runner.url, '/health')).body.targets.anycable).toBe('local');
  }, 60_000);
});

describe('runner startup with TARGET_URL_ALLOW', () => {
  it('refuses a malformed allowlist (exit 2, naming TARGET_URL_ALLOW)', async () => {
    const { runnerExit } = await import('./testing.ts');
    const r = await runnerExit({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir(), TARGET_URL_ALLOW: 'http://x.internal' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('TARGET_URL_ALLOW');
  }, 30_000);
});

describe('runner where uWS does not load (the loader pointed at a missing module)', () => {
  let runner: RunnerProcess;
  beforeAll(async () => {
    runner = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir(), UWS_MODULE: '/nonexistent/uWebSockets.js' });
  }, 60_000);
  afterAll(async () => {
    await runner?.stop();
  });

  it('/health says uws is not installed here and why; its routes answer 503; ws still runs', async () => {
    const health = await api(runner.url, '/health', { token: TOKEN });
    expect(health.body.targets).toMatchObject({ ws: 'local', replay: 'local', uws: expect.stringMatching(/^not installed here: uWebSockets\.js not installed here \(\/nonexistent\/uWebSockets\.js\)/) });
    const r = await api(runner.url, `/bench-jitter-uws?${SMALL}`, { method: 'POST', token: TOKEN });
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ code: 'RR_ERR_TARGET_UNAVAILABLE', message: expect.stringContaining('not installed here') });
    const ws = await api(runner.url, `/bench-jitter-ws?${SMALL}`, { method: 'POST', token: TOKEN });
    expect(ws.status, JSON.stringify(ws.body)).toBe(200);
    expect(ws.body).toMatchObject({ targetServer: 'ws', receivedDeliveries: 15 });
  }, 60_000);
});
