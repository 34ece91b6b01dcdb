import { connect as tcpConnect, createServer, type Server } from 'node:net';
import { Manager, type Socket } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import { childRng, mulberry32 } from '../../lib/rng.ts';
import { sleep, waitUntil } from '../../lib/time.ts';
import { freePort } from '../../services/uws/server.ts';
import { withTarget } from '../measure/local-target.ts';
import { tunedReconnect } from './anycable.ts';
import { getTarget } from './index.ts';
import {
  MANUAL_RECONNECT_MAX_ATTEMPTS,
  checkReconnectOptions,
  afterOffline,
  backoffCeilingMs,
  fullJitter,
  ManualReconnects,
  offlineAfterDropMs,
  reconnectLoop,
  socketIoBackoff,
  SOCKETIO_DEFAULT_BACKOFF,
  SOCKETIO_LIBRARY_BACKOFF,
  strategyBackoff,
  strategyDelayMs,
  TUNED_BACKOFF,
  tunedSpec,
} from './reconnect.ts';
import { seedSocketIoBackoff } from './seeded-jitter.ts';
import { socketIoCsrTarget } from './socketio.ts';

/** Draw `n` delays for attempt k from socket.io-client's own Backoff (the one its Manager reconnects with). */
function socketIoDelays(opts: ReturnType<typeof socketIoBackoff>, attempt: number, n: number): number[] {
  const m = new Manager('http://127.0.0.1:1', { autoConnect: false, ...opts });
  const backoff = (m as unknown as { backoff: { attempts: number; duration(): number } }).backoff;
  return Array.from({ length: n }, () => {
    backoff.attempts = attempt;
    return backoff.duration();
  });
}

describe('one tuned strategy for every library-driven client', () => {
  it('the AnyCable client and socket.io-client draw attempt k from the same range [0, min(5 s, 500 ms x 2^k)]', () => {
    expect(TUNED_BACKOFF).toEqual({ baseMs: 500, factor: 2, capMs: 5000 });
    for (let k = 0; k <= 6; k++) {
      const ceiling = backoffCeilingMs(TUNED_BACKOFF, k);
      expect(tunedReconnect(() => 0.999999)(k)).toBeCloseTo(ceiling, -1);
      expect(tunedReconnect(() => 0)(k)).toBe(0);
      const sio = socketIoDelays(socketIoBackoff('tuned'), k, 4000);
      const mean = sio.reduce((a, b) => a + b, 0) / sio.length;
      expect(Math.max(...sio)).toBeLessThanOrEqual(ceiling);
      expect(Math.max(...sio)).toBeGreaterThan(0.9 * ceiling);
      // Uncapped attempts: full jitter's spread and mean (half the ceiling). From attempt 4 socket.io
      // clamps its upper half at the cap instead, so those draws sit in [0.08, 1] x 5 s.
      if (ceiling * 2 <= TUNED_BACKOFF.capMs) {
        expect(Math.min(...sio)).toBeLessThan(0.1 * ceiling);
        expect(Math.abs(mean - ceiling / 2)).toBeLessThan(0.05 * ceiling);
      }
    }
  });

  it('the CSR adapter hands socket.io-client the shared backoff for tuned and keeps its own for default', async () => {
    const open = (strategy: string) => {
      // Port 1 refuses: the Manager exists (and retries) without a server; we only read its settings.
      const c = socketIoCsrTarget.createClient({ index: 0, url: 'http://127.0.0.1:1', stream: 's', reconnectStrategy: strategy });
      void c.connect().catch(() => {});
      const mgr = (c as unknown as { socket: Socket }).socket.io;
      const got = { reconnectionDelay: mgr.reconnectionDelay(), reconnectionDelayMax: mgr.reconnectionDelayMax(), randomizationFactor: mgr.randomizationFactor() };
      c.close();
      return got;
    };
    expect(open('tuned')).toEqual({ reconnectionDelay: 250, reconnectionDelayMax: 5000, randomizationFactor: 1 });
    expect(open('tuned')).toEqual(socketIoBackoff('tuned'));
    expect(open('default')).toEqual(SOCKETIO_DEFAULT_BACKOFF);
  });

  it('rejects an unknown strategy name', () => {
    expect(() => socketIoBackoff('warp')).toThrow(/unknown reconnect strategy "warp"/);
  });
});

describe('the manual reconnect policy (runner-driven clients)', () => {
  it('offline time after a drop: never under a manual target\'s floor (MIN_OFFLINE_MS, 2 s for default Socket.IO); a library target\'s is the drop\'s', () => {
    const [sio, csr, ws] = ['socketio', 'socketio-csr', 'ws'].map(getTarget) as [ReturnType<typeof getTarget>, ReturnType<typeof getTarget>, ReturnType<typeof getTarget>];
    expect(sio.offlineFloorMs).toBe(2000);
    expect(offlineAfterDropMs(sio, 500)).toBe(2000);
    expect(offlineAfterDropMs(sio, 3000)).toBe(3000);
    expect(offlineAfterDropMs(ws, 500)).toBe(500);
    expect(offlineAfterDropMs(ws, 0)).toBe(0);
    expect(offlineAfterDropMs(csr, 500)).toBe(500);
  });

  it('the benchmark\'s policy: offline time, then 1 s retries of at most 10 s each, until the run ends', () => {
    const p = afterOffline(2000);
    expect([0, 1, 2, 29].map((k) => p.delayMs(k))).toEqual([2000, 1000, 1000, 1000]);
    expect([p.maxAttempts, p.attemptTimeoutMs]).toEqual([MANUAL_RECONNECT_MAX_ATTEMPTS, 10_000]);
  });

  it('default is socket.io-client\'s own backoff, draw for draw: the library\'s defaults and its backo2 with the same seeded stream', () => {
    const lib = new Manager('http://127.0.0.1:1', { autoConnect: false });
    expect({ reconnectionDelay: lib.reconnectionDelay(), reconnectionDelayMax: lib.reconnectionDelayMax(), randomizationFactor: lib.randomizationFactor() }).toEqual(SOCKETIO_LIBRARY_BACKOFF);
    seedSocketIoBackoff(lib, mulberry32(9));
    const backoff = (lib as unknown as { backoff: { duration(): number } }).backoff;
    const theirs = Array.from({ length: 12 }, () => backoff.duration());
    const rng = mulberry32(9);
    expect(Array.from({ length: 12 }, (_, k) => strategyDelayMs('default', k, rng))).toEqual(theirs);
    // 1 s x2, +-50%, cap 5 s.
    expect(theirs[0]).toBeGreaterThanOrEqual(500);
    expect(theirs[0]).toBeLessThanOrEqual(1500);
    expect(Math.max(...theirs)).toBeLessThanOrEqual(5000);
  });

  it('tuned is the library clients\' full jitter, with the benchmark\'s reconnectBaseMs', () => {
    for (const base of [undefined, 50, 500]) {
      const a = mulberry32(4);
      const b = mulberry32(4);
      const ours = Array.from({ length: 8 }, (_, k) => strategyDelayMs('tuned', k, a, base));
      expect(ours).toEqual(Array.from({ length: 8 }, (_, k) => fullJitter(tunedSpec(base), b)(k)));
      ours.forEach((d, k) => expect(d).toBeLessThan(backoffCeilingMs(tunedSpec(base), k)));
    }
    expect(strategyDelayMs('tuned', 0, () => 0.999999, 50)).toBeCloseTo(50, 0);
    expect(() => strategyBackoff('warp', Math.random)).toThrow(/unknown reconnect strategy "warp"/);
  });

  it('seeded: one (seed, client) gives one schedule; another client or seed gives another', () => {
    const schedule = (seed: number, i: number) => {
      const p = strategyBackoff('default', childRng(seed, i));
      return Array.from({ length: 10 }, (_, k) => p.delayMs(k));
    };
    expect(schedule(7, 3)).toEqual(schedule(7, 3));
    expect(schedule(7, 4)).not.toEqual(schedule(7, 3));
    expect(schedule(8, 3)).not.toEqual(schedule(7, 3));
  });
});

describe('the reconnect loop against real sockets', () => {
  it('a dropped ws client stays offline for the policy\'s offline time, then comes back subscribed', async () => {
    await withTarget(getTarget('ws'), undefined, async (url) => {
      const c = getTarget('ws').createClient({ index: 0, url, stream: 'loop' });
      const connectedAt: number[] = [];
      c.on('connected', () => connectedAt.push(Date.now()));
      c.on('error', () => {});
      await c.connect();
      expect(c.drop()).toBe(true);
      const droppedAt = Date.now();
      const attempts: number[] = [];
      const ok = await reconnectLoop(c, afterOffline(400, { retryMs: 100 }), { done: () => false, onAttempt: (k) => attempts.push(k) });
      expect(ok).toBe(true);
      expect(attempts).toEqual([0]);
      expect(connectedAt).toHaveLength(2);
      expect(connectedAt[1]! - droppedAt).toBeGreaterThanOrEqual(400);
      c.close();
    });
  });

  it('outlasts a long outage: past the benchmark driver\'s 30 attempts, until the target answers again (a 6-minute laptop-sleep is ~33 attempts of 10 s)', async () => {
    await withTarget(getTarget('ws'), undefined, async (url) => {
      const upstream = Number(new URL(url).port);
      // A front port that refuses until 40 attempts have failed, then forwards to the target.
      const port = await freePort('127.0.0.1');
      const front = createServer((sock) => {
        const up = tcpConnect(upstream, '127.0.0.1');
        sock.on('error', () => up.destroy()).pipe(up).on('error', () => sock.destroy()).pipe(sock);
      });
      const c = getTarget('ws').createClient({ index: 0, url: `http://127.0.0.1:${port}`, stream: 'outage' });
      c.on('error', () => {});
      let failures = 0;
      const back = await reconnectLoop(c, afterOffline(0, { retryMs: 5 }), { done: () => false, onFailure: () => void (++failures === 40 && front.listen(port, '127.0.0.1')) });
      expect(back).toBe(true);
      expect(failures).toBe(40);
      c.close();
      await new Promise((r) => front.close(r));
    });
  });

  it('a refused target: every attempt fails at its pace, the loop gives up after maxAttempts; done() ends it early', async () => {
    // A port that was just listening and is closed now refuses at once.
    const port = await freePort('127.0.0.1');
    const c = getTarget('ws').createClient({ index: 0, url: `http://127.0.0.1:${port}`, stream: 's' });
    c.on('error', () => {});
    const failures: unknown[] = [];
    const t0 = Date.now();
    expect(await reconnectLoop(c, afterOffline(50, { retryMs: 50, maxAttempts: 4 }), { done: () => false, onFailure: (e) => failures.push(e) })).toBe(false);
    expect(failures).toHaveLength(4);
    expect((failures[0] as { code?: string }).code).toBe('ECONNREFUSED');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(200);
    let calls = 0;
    expect(await reconnectLoop(c, afterOffline(10, { retryMs: 10, maxAttempts: 50 }), { done: () => ++calls > 3, onFailure: () => {} })).toBe(false);
    expect(calls).toBeLessThan(8);
    c.close();
  });

  it('an attempt that hangs (TCP accepted, no upgrade answer) fails at attemptTimeoutMs', async () => {
    const held: import('node:net').Socket[] = [];
    const srv: Server = createServer((s) => void held.push(s));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    try {
      const c = getTarget('ws').createClient({ index: 0, url: `http://127.0.0.1:${(srv.address() as { port: number }).port}`, stream: 's' });
      c.on('error', () => {});
      const failures: string[] = [];
      const t0 = Date.now();
      expect(await reconnectLoop(c, afterOffline(0, { maxAttempts: 1, attemptTimeoutMs: 300 }), { done: () => false, onFailure: (e) => failures.push((e as Error).message) })).toBe(false);
      expect(failures).toEqual(['timed out after 300 ms']);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
      c.close();
    } finally {
      for (const s of held) s.destroy();
      await new Promise((r) => srv.close(r));
    }
  });

  it('one loop per client at a time, and closing cuts its pending wait short', async () => {
    const m = new ManualReconnects(2);
    let reconnects = 0;
    const client = { reconnect: async () => void reconnects++ };
    const stop = new AbortController();
    const first = m.run(0, client, afterOffline(10_000), { done: () => stop.signal.aborted, sleep: (ms) => sleep(ms, stop.signal) });
    expect(m.active(0)).toBe(true);
    expect(await m.run(0, client, afterOffline(0), { done: () => false })).toBe(false);
    expect(await m.run(1, client, afterOffline(0), { done: () => false })).toBe(true);
    const t0 = Date.now();
    stop.abort();
    expect(await first).toBe(false);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(reconnects).toBe(1);
    expect(m.active(0)).toBe(false);
    await waitUntil(() => !m.active(1), 100);
  });
});

describe('checkReconnectOptions: one rule for every runner and every target', () => {
  const own = { name: 'mine', ownBackoff: 'my-lib reconnects on its own timer' };
  it('a target that keeps its own backoff refuses the tuned one, with its own reason', () => {
    expect(() => checkReconnectOptions(own, { reconnectStrategy: 'tuned' })).toThrow(/^my-lib reconnects on its own timer: --reconnect-strategy tuned is not supported by target mine$/);
    expect(() => checkReconnectOptions(own, { reconnectStrategy: 'default' })).not.toThrow();
    expect(() => checkReconnectOptions({ name: 'ws' }, { reconnectStrategy: 'tuned' })).not.toThrow();
  });
  it('a base without the tuned strategy is refused, not ignored', () => {
    expect(() => checkReconnectOptions({ name: 'ws' }, { reconnectStrategy: 'default', reconnectBaseMs: 200 })).toThrow(expect.objectContaining({ code: 'RR_ERR_OPTION_INVALID', details: { option: 'reconnectBaseMs' } }));
  });
  it('every runner applies it before anything connects: jitter, avalanche and deploy-impact refuse soketi + tuned', async () => {
    const { parseJitterOptions } = await import('../../runners/jitter/options.ts');
    const { parseAvalancheOptions } = await import('../../runners/avalanche/options.ts');
    const { DEPLOY_IMPACT_OPTIONS, checkDeployImpactOptions } = await import('../../runners/deploy-impact/options.ts');
    const { parseOptions } = await import('../../lib/options.ts');
    const values = { target: 'soketi', 'reconnect-strategy': 'tuned' };
    const why = /pusher-js reconnects on its own backoff.*not supported by target soketi/;
    expect(() => parseJitterOptions({ values, origin: 'CLI' })).toThrow(why);
    expect(() => parseAvalancheOptions({ values, origin: 'CLI' })).toThrow(why);
    expect(() => checkDeployImpactOptions(parseOptions(DEPLOY_IMPACT_OPTIONS, { values, origin: 'CLI' }))).toThrow(why);
  });
});
