import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { strategyDelayMs as backoffMs } from '../../engine/targets/reconnect.ts';
import { tunedReconnect } from '../../engine/targets/anycable.ts';
import { socketIoBackoff } from '../../engine/targets/reconnect.ts';
import { uwsAvailability } from '../../services/uws/load.ts';
import { api, startRunner, tempResultsDir, type RunnerProcess } from './testing.ts';

/**
 * Requests exactly as the benchmark's own drivers send them (anycable/nodejs-websocket-bench:
 * idle-multi sends `wsUrl` alone for uWS and `cableUrl` alone for AnyCable, whispers does the same,
 * jitter-multi forwards RECONNECT_BASE_MS as `reconnectBaseMs`), against a real runner on port 0
 * with real targets and real clients.
 */
const TOKEN = 'bench-requests-token-0123456789';
/** The uWS server is an optional dependency: where its binary does not load, its test says so by skipping. */
const UWS = uwsAvailability().available;

describe('tuned backoff base (reconnectBaseMs)', () => {
  it('moves the ceiling of every attempt, keeps the ×2 growth and the 5 s cap', () => {
    const top = () => 0.999999;
    expect(tunedReconnect(top)(0)).toBeCloseTo(500, 0);
    expect(tunedReconnect(top, 2000)(0)).toBeCloseTo(2000, 0);
    expect(tunedReconnect(top, 2000)(1)).toBeCloseTo(4000, 0);
    expect(tunedReconnect(top, 2000)(5)).toBeCloseTo(5000, 0);
    expect(backoffMs('tuned', 0, top, 50)).toBeCloseTo(50, 0);
    expect(backoffMs('tuned', 0, top)).toBeCloseTo(500, 0);
    expect(socketIoBackoff('tuned', 2000)).toEqual({ reconnectionDelay: 1000, reconnectionDelayMax: 5000, randomizationFactor: 1 });
    expect(socketIoBackoff('default', 2000).reconnectionDelay).toBe(2000);
    expect(() => tunedReconnect(top, 0)).toThrow(/> 0/);
  });
});

describe("runner: the benchmark drivers' request forms", () => {
  let runner: RunnerProcess;
  let ws: ServiceHandle;
  let replay: ServiceHandle;
  let uws: ServiceHandle | undefined;
  const post = (path: string) => api(runner.url, path, { method: 'POST', token: TOKEN });
  beforeAll(async () => {
    [ws, replay, uws] = await Promise.all([startService('ws'), startService('replay'), UWS ? startService('uws') : undefined]);
    runner = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir(), TARGET_URL_ALLOW: '127.0.0.1:*' });
  }, 60_000);
  afterAll(async () => {
    await Promise.all([runner?.stop(), ws?.stop(), replay?.stop(), uws?.stop()]);
  });
  const wsPort = () => new URL(ws.httpUrl).port;
  const cable = () => `ws://127.0.0.1:${new URL(replay.httpUrl).port}/cable`;

  it.skipIf(!UWS)('idle on uws with wsUrl alone (idle-multi TARGET=uws) holds the connections on that uWS server', async () => {
    const port = new URL(uws!.httpUrl).port;
    const r = await post(`/bench-idle-uws?n=6&hold=1&ramp=100&stream=idle-probe&shard=shard-1&wsUrl=ws://127.0.0.1:${port}/ws`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ connected: 6, failed: 0, targetServer: 'uws', targetSource: 'request' });
  }, 60_000);

  it('whispers on anycable with cableUrl alone (the manifest\'s whispers-anycable) run on that server', async () => {
    const r = await post(`/bench-whispers-anycable?n=6&rooms=2&ramp=100&interval=200&duration=2&payload=64&cableUrl=${cable()}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.targetSource).toBe('request');
    expect(r.body.whispersReceived).toBeGreaterThan(0);
  }, 60_000);

  it('a wsUrl alone on another path cannot name the server: 400 naming wsUrl', async () => {
    const r = await post(`/bench-idle-uws?n=2&hold=1&wsUrl=ws://127.0.0.1:${wsPort()}/socket`);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'RR_ERR_OPTION_INVALID', details: { option: 'wsUrl' } });
    expect(r.body.message).toMatch(/httpUrl/);
  });

  it('reconnectBaseMs without reconnectMode=tuned, or on a runner-reconnected target, is a 400 saying why', async () => {
    const a = await post(`/bench-jitter-anycable?n=2&msgs=2&reconnectBaseMs=200&cableUrl=${cable()}`);
    expect(a.status).toBe(400);
    expect(a.body).toMatchObject({ code: 'RR_ERR_OPTION_INVALID', details: { option: 'reconnectBaseMs' } });
    expect(a.body.message).toMatch(/reconnectMode=tuned/);
    const b = await post(`/bench-jitter-uws?n=2&msgs=2&reconnectMode=tuned&reconnectBaseMs=200&wsUrl=ws://127.0.0.1:${wsPort()}/ws`);
    expect(b.status).toBe(400);
    expect(b.body.message).toMatch(/reconnects these clients itself/);
  });

  it('reconnectBaseMs sets how long dropped @anycable/core clients wait before they are back', async () => {
    const run = async (base: number) => {
      const r = await post(`/bench-jitter-anycable?n=8&msgs=20&interval=400&duration=8&jitter=2&jitterMs=0&ramp=200&settle=3000&seed=11&reconnectMode=tuned&reconnectBaseMs=${base}&cableUrl=${cable()}`);
      expect(r.status, JSON.stringify(r.body).slice(0, 500)).toBe(200);
      expect(r.body.effectiveParams).toMatchObject({ reconnectBaseMs: base, reconnectMode: 'tuned' });
      expect(r.body.recoveryMs.count).toBeGreaterThan(4);
      return r.body.recoveryMs.p50 as number;
    };
    const fast = await run(20);
    const slow = await run(4000);
    // Full jitter under the base: the slow run's median first attempt is ~2 s, the fast one's ~10 ms.
    expect(slow).toBeGreaterThan(fast + 500);
  }, 120_000);
});

describe("runner: the benchmark's avalanche against a target URL", () => {
  let plain: RunnerProcess;
  let hooked: RunnerProcess;
  let ws: ServiceHandle;
  let hook: Server;
  let hookCalls = 0;
  beforeAll(async () => {
    ws = await startService('ws');
    // The operator's restart hook: what `railway service redeploy` is to the benchmark's caller.
    hook = createServer((req, res) => {
      hookCalls++;
      req.resume();
      void (async () => {
        await ws.stop(100);
        ws = await ws.restart();
        res.writeHead(200).end('{"ok":true}');
      })();
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    const env = { BENCH_RUNNER_TOKEN: TOKEN, TARGET_URL_ALLOW: '127.0.0.1:*' };
    [plain, hooked] = await Promise.all([
      startRunner({ ...env, RESULTS_DIR: tempResultsDir() }),
      startRunner({ ...env, RESULTS_DIR: tempResultsDir(), AVALANCHE_RESTART_HOOK_URL: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/restart` }),
    ]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([plain?.stop(), hooked?.stop(), ws?.stop()]);
    await new Promise((r) => hook?.close(r));
  });
  const path = () => `/bench-avalanche-uws?n=5&ramp=100&prearm=1&recoveryWait=20&stream=avalanche-uws&wsUrl=ws://127.0.0.1:${new URL(ws.httpUrl).port}/ws`;

  it('without an operator restart it is a 400 saying the runner cannot restart a server it did not start', async () => {
    const r = await api(plain.url, path(), { method: 'POST', token: TOKEN });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'RR_ERR_OPTION_INVALID', details: { option: 'restart' } });
    expect(r.body.message).toMatch(/AVALANCHE_RESTART_COMMAND or AVALANCHE_RESTART_HOOK_URL/);
  });

  it("with the operator's hook, prearm ends in that restart and the clients come back", async () => {
    const r = await api(hooked.url, path(), { method: 'POST', token: TOKEN });
    expect(r.status, JSON.stringify(r.body).slice(0, 600)).toBe(200);
    expect(r.body.effectiveParams).toMatchObject({ restart: 'hook', prearm: 1, recoveryWait: 20 });
    expect(hookCalls).toBe(1);
    expect(r.body).toMatchObject({ targetSource: 'request', initiallyConnected: 5, disconnected: 5, reconnectRatePct: 100, reconnectMs: { count: 5 } });
    expect(r.body.recoveryTimeMs).toBeGreaterThan(0);
    expect(r.body.rampElapsedMs).toBeGreaterThan(0);
    expect(r.body.totalElapsedMs).toBe(r.body.elapsedMs);
  }, 90_000);
});

describe('reconnect-base-ms on the CLI tables', () => {
  it('is refused without the tuned strategy instead of being ignored', async () => {
    const { parseJitterOptions } = await import('../../runners/jitter/options.ts');
    const { parseAvalancheOptions } = await import('../../runners/avalanche/options.ts');
    expect(() => parseJitterOptions({ values: { reconnectBaseMs: 200 }, origin: 'CLI' })).toThrow(/--reconnect-strategy tuned/);
    expect(parseJitterOptions({ values: { reconnectBaseMs: 200, reconnectStrategy: 'tuned' }, origin: 'CLI' }).reconnectBaseMs).toBe(200);
    expect(() => parseAvalancheOptions({ values: { target: 'ws', reconnectBaseMs: 200 }, origin: 'CLI' })).toThrow(/--reconnect-strategy tuned/);
  });
});
