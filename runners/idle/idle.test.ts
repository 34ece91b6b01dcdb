import { afterAll, describe, expect, it } from 'vitest';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { withTarget } from '../../engine/measure/local-target.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { idleServiceArgs, parseIdleOptions } from './options.ts';
import { runIdle } from './run.ts';
import { checkIdleValidity } from './validity.ts';

/** Real idle runs at small scale: real worker processes, real lean clients, real local targets. */
const small = (target: string, extra: Record<string, string> = {}) => parseIdleOptions({ values: { target, n: '60', hold: '1', ramp: '400', workers: '2', ...extra }, origin: 'test' });

describe('idle runner over two worker processes', () => {
  for (const target of ['ws', 'socketio', 'socketio-csr', 'replay']) {
    it(`holds every connection against ${target} and reports runner and target memory`, async () => {
      const opts = small(target, { stream: `idle-${target}` });
      const r = await withTarget(getTarget(target), undefined, (url, svc) => runIdle(opts, url, svc?.pid));
      expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
      expect(r.validity.flags.filter((f) => f.code !== 'RUNNER_LOOP_LAG')).toEqual([]);
      expect(r).toMatchObject({ test: 'idle', target, clients: 60, connected: 60, welcomed: 60, subscribed: 60, failed: 0, openAtEndOfHold: 60 });
      expect(r.runner.workers).toBe(2);
      expect(r.runner.perWorker.map((w) => w.subscribed)).toEqual([30, 30]);
      expect(r.timeToAllSubscribedMs).toBeGreaterThan(0);
      expect(r.holdElapsedMs).toBeGreaterThanOrEqual(1000);
      expect(r.targetMetrics.source).toBe('proc-tree');
      expect(r.targetMetrics.peakConnections).toBeGreaterThanOrEqual(60);
      expect(r.targetMetrics.bytesPerConnection).not.toBeNull();
      expect(r.runner.rssPerClientBytes).not.toBeNull();
    });
  }
});

describe('idle runner against a target with --workers (server-workers)', () => {
  for (const target of ['ws', 'socketio']) {
    it(`${target} as 2 workers: the connections it reports are the sum over its workers`, async () => {
      const opts = small(target, { stream: `idle-w-${target}`, hold: '2.5', serverWorkers: '2' });
      const def = getTarget(target);
      const r = await withTarget({ ...def, service: { ...def.service!, args: [...def.service!.args, ...idleServiceArgs(opts)] } }, undefined, (url, svc) => runIdle(opts, url, svc?.pid));
      expect(r).toMatchObject({ clients: 60, subscribed: 60, failed: 0 });
      // One worker holds about half: only the cluster's sum reaches 60.
      expect(r.targetMetrics.peakConnections).toBe(60);
      expect(r.targetMetrics.bytesPerConnection).not.toBeNull();
    });
  }

  it('refuses server-workers for a target whose server cannot run as workers', () => {
    expect(() => small('socketio-csr', { serverWorkers: '2' })).toThrow(/Connection State Recovery/);
    expect(() => small('anycable', { serverWorkers: '2' })).toThrow(/no local service/);
    expect(small('ws', { serverWorkers: '2' }).serverWorkers).toBe(2);
  });
});

describe('idle validity fires on real causes', () => {
  const services: ServiceHandle[] = [];
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop()));
  });

  it("names the runner's own fd limit (RUNNER_FD_LIMIT), not the target", async () => {
    const svc = await startService('ws');
    services.push(svc);
    const r = await runIdle(small('ws', { n: '120', workers: '1', workerFdLimit: '64', ramp: '1000' }), svc.httpUrl, svc.pid);
    expect(r.failureCauses.fd_limit).toBeGreaterThan(0);
    expect(r.subscribed + r.failed).toBe(120);
    expect(r.validity.valid).toBe(false);
    expect(r.validity.flags.map((f) => f.code)).toContain('RUNNER_FD_LIMIT');
  });

  it('blames the target when nothing listens (NOTHING_CONNECTED, CONNECT_FAILURES, TARGET_METRICS_UNAVAILABLE)', async () => {
    const r = await runIdle(small('ws', { n: '10', workers: '1', hold: '0' }), 'http://127.0.0.1:1', undefined);
    expect(r.failureCauses).toEqual({ target: 10 });
    expect(r.validity.flags.map((f) => f.code).sort()).toEqual(['CONNECT_FAILURES', 'NOTHING_CONNECTED', 'TARGET_METRICS_UNAVAILABLE']);
  });

  it('counts connections lost during the hold (HOLD_DISCONNECTS)', async () => {
    const svc = await startService('ws');
    let killed = false;
    const r = await runIdle(small('ws', { n: '20', hold: '3' }), svc.httpUrl, svc.pid, {
      progress: (p) => {
        if (p.phase === 'hold' && !killed) {
          killed = true;
          void svc.kill('SIGKILL');
        }
      },
    });
    expect(killed).toBe(true);
    expect(Object.values(r.disconnectedDuringHold).reduce((a, b) => a + b, 0)).toBe(20);
    expect(r.validity.flags.map((f) => f.code)).toContain('HOLD_DISCONNECTS');
  });

  it('flags port exhaustion and runner loop lag from their inputs', () => {
    const base = { clients: 10, subscribed: 10, failed: 0, failureCauses: {}, disconnectedDuringHold: {}, runnerLoopLagP99Ms: 0, targetSamples: 5 };
    expect(checkIdleValidity(base)).toEqual({ valid: true, flags: [] });
    const ports = checkIdleValidity({ ...base, subscribed: 8, failed: 2, failureCauses: { port_exhaustion: 2 } });
    expect(ports.valid).toBe(false);
    expect(ports.flags.map((f) => f.code)).toEqual(['RUNNER_PORT_EXHAUSTION']);
    expect(checkIdleValidity({ ...base, runnerLoopLagP99Ms: 80 }).flags.map((f) => f.code)).toEqual(['RUNNER_LOOP_LAG']);
  });
});
