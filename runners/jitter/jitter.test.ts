import { describe, expect, it } from 'vitest';
import { withTarget } from '../../engine/measure/local-target.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { parseJitterOptions, type JitterOptions } from './options.ts';
import { runJitter } from './run.ts';
import type { JitterResult } from './result.ts';
import { planDrops } from '../../chaos/plans/schedule.ts';

/**
 * A short, real jitter run per reference target: real servers on port 0, real clients, real
 * drops. With messages every 150 ms and every client offline >= 1 s at least once, an
 * at-most-once target must lose messages and a replaying one must not.
 */
const SMALL = { clients: '20', msgs: '60', interval: '150', jitter: '2', 'jitter-ms': '1000', ramp: '200', settle: '8000', seed: '1234' };
const run = (target: string): Promise<JitterResult> => {
  const opts: JitterOptions = parseJitterOptions({ values: { ...SMALL, target }, origin: 'test' });
  return withTarget(getTarget(target), undefined, (url) => runJitter(opts, url).result);
};

describe('jitter runner against the reference servers', () => {
  const results = Promise.all(['ws', 'socketio', 'socketio-csr'].map(run));

  it('ws and default socketio lose what was published while a client was offline', async () => {
    const [ws, sio] = await results;
    for (const r of [ws!, sio!]) {
      expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
      expect(r.connectFailures).toBe(0);
      expect(r.published).toBe(60);
      expect(r.jitterEvents).toBeGreaterThanOrEqual(20);
      expect(r.lostDeliveries, `${r.target} should lose messages`).toBeGreaterThan(0);
      expect(r.deliveryRatePct).toBeLessThan(100);
      expect(r.lostDeliveries + r.receivedDeliveries).toBe(r.expectedDeliveries);
      expect(r.csrResumeRatePct).toBeNull();
    }
    // Socket.IO's manual reconnect is floored at 2 s offline.
    expect(sio!.chaos.offlineMs).toBe(2000);
    expect(sio!.recoveryMs.p50).toBeGreaterThanOrEqual(2000);
  });

  it('socketio-csr recovers every message through Connection State Recovery', async () => {
    const [, , csr] = await results;
    expect(csr!.validity.valid, JSON.stringify(csr!.validity)).toBe(true);
    expect(csr!.jitterEvents).toBeGreaterThanOrEqual(20);
    expect(csr!.lostDeliveries).toBe(0);
    expect(csr!.deliveryRatePct).toBe(100);
    expect(csr!.duplicates).toBe(0);
    expect(csr!.csrResumes).toBeGreaterThan(0);
    expect(csr!.csrResumeRatePct).toBeGreaterThan(90);
    // Replayed messages arrive late: the tail shows the offline window.
    expect(csr!.latencyRawMs.max).toBeGreaterThan(500);
  });

  it('results carry the seed, the chaos timeline and a mergeable histogram', async () => {
    const [ws] = await results;
    expect(ws!.seed).toBe(1234);
    expect(ws!.chaos.timeline.length).toBe(ws!.jitterEvents + ws!.jitterSkipped);
    expect(ws!.chaos.timeline[0]).toMatchObject({ target: expect.any(Number), scope: 'client', kind: 'drop', atMs: expect.any(Number), applied: true });
    expect(ws!.chaos.disruptions[0]).toMatchObject({ kind: 'drop', events: ws!.jitterEvents, affectedClients: ws!.jitterEvents, undetected: 0 });
    expect(ws!.latencyHistogram.count).toBe(ws!.receivedDeliveries);
    expect(ws!.latencyOverMinMs.skewFloor).toBe(ws!.skewFloor);
    expect(ws!.worstClient?.lost).toBeGreaterThan(0);
    expect(ws!.runnerPeakRssMb).toBeGreaterThan(10);
    expect(ws!.connectFailureCauses).toEqual({});
  });

  it('every target got the same seeded drop plan', async () => {
    const all = await results;
    const planned = planDrops(1234, 20, 2, 60 * 150).flat().length;
    for (const r of all) expect(r.jitterEvents + r.jitterSkipped).toBe(planned);
  });
});

describe('drop timeline', () => {
  it('is a pure function of the seed', () => {
    expect(planDrops(7, 50, 15, 60_000)).toEqual(planDrops(7, 50, 15, 60_000));
    expect(planDrops(7, 50, 15, 60_000)).not.toEqual(planDrops(8, 50, 15, 60_000));
  });

  it('follows the benchmark shape: first at 5 s + U(0,J), then every J + U(0,5) s, inside the window', () => {
    const plan = planDrops(99, 200, 15, 120_000);
    for (const times of plan) {
      expect(times[0]).toBeGreaterThanOrEqual(5000);
      expect(times[0]).toBeLessThanOrEqual(20_000);
      for (let k = 1; k < times.length; k++) {
        const gap = times[k]! - times[k - 1]!;
        expect(gap).toBeGreaterThanOrEqual(15_000);
        expect(gap).toBeLessThanOrEqual(20_000);
      }
      expect(times.at(-1)!).toBeLessThan(120_000);
    }
  });

  it('jitter 0 means no drops', () => {
    expect(planDrops(1, 3, 0, 60_000)).toEqual([[], [], []]);
  });
});

describe('jitter options', () => {
  it.each([
    [{ target: 'nope' }, 'RR_ERR_TARGET_UNKNOWN'],
    [{ clients: 'ten' }, 'RR_ERR_OPTION_INVALID'],
    [{ clients: '20000' }, 'RR_ERR_OPTION_INVALID'],
    [{ interval: '0' }, 'RR_ERR_OPTION_INVALID'],
    [{ jitter: '-1' }, 'RR_ERR_OPTION_INVALID'],
    [{ url: 'http://10.0.0.5:3000' }, 'RR_ERR_OPTION_INVALID'],
    [{ url: 'not a url' }, 'RR_ERR_OPTION_INVALID'],
    [{ colour: 'red' }, 'RR_ERR_OPTION_UNKNOWN'],
  ])('%j → %s', (values, code) => {
    expect(() => parseJitterOptions({ values, origin: 'test' })).toThrow(expect.objectContaining({ code }));
  });

  it('reads the benchmark env vars', () => {
    const o = parseJitterOptions({ env: { NUM_CLIENTS: '50', TOTAL_MESSAGES: '10', INTERVAL_MS: '100', JITTER_INTERVAL: '3', JITTER_DURATION: '500', RAMP_RATE: '25' } });
    expect(o).toMatchObject({ clients: 50, msgs: 10, interval: 100, jitter: 3, jitterMs: 500, ramp: 25 });
  });
});
