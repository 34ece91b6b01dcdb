import { describe, expect, it } from 'vitest';
import { withTarget } from '../../engine/measure/local-target.ts';
import { parseJitterOptions } from '../../runners/jitter/options.ts';
import type { JitterResult } from '../../runners/jitter/result.ts';
import { runJitter } from '../../runners/jitter/run.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { CUTOFF, DISRUPTIONS, parsePlan, planNeedsProxy } from './catalog.ts';
import { buildSchedule, planDrops } from './schedule.ts';
import { uwsAvailability } from '../../services/uws/load.ts';

const run = (target: string, values: Record<string, string>): Promise<JitterResult> =>
  withTarget(getTarget(target), undefined, (url) => runJitter(parseJitterOptions({ values: { ...values, target }, origin: 'test' }), url).result);

describe('plan catalog and schedules', () => {
  it('parses single and combined plans and refuses unknown ones', () => {
    expect(parsePlan('drop')).toEqual(['drop']);
    expect(parsePlan('drop+flaky+drop')).toEqual(['drop', 'flaky']);
    expect(planNeedsProxy(parsePlan('drop'))).toBe(false);
    expect(planNeedsProxy(parsePlan('drop+partition'))).toBe(true);
    expect(() => parsePlan('earthquake')).toThrow(expect.objectContaining({ code: 'RR_ERR_OPTION_INVALID', message: expect.stringMatching(/unknown chaos plan "earthquake"/) }));
  });

  it('one seed gives one schedule; each kind has its own stream', () => {
    const base = { seed: 3, clients: 30, groups: 3, jitterSec: 5, windowMs: 60_000 };
    const a = buildSchedule({ ...base, kinds: ['drop', 'partition'] });
    expect(buildSchedule({ ...base, kinds: ['drop', 'partition'] })).toEqual(a);
    expect(buildSchedule({ ...base, seed: 4, kinds: ['drop', 'partition'] })).not.toEqual(a);
    // Adding a kind leaves the others' timelines as they were.
    const dropsOnly = buildSchedule({ ...base, kinds: ['drop'] });
    expect(a.filter((s) => s.kind === 'drop')).toEqual(dropsOnly);
    expect(dropsOnly.length).toBe(planDrops(3, 30, 5, 60_000).flat().length);
  });

  it('network disruptions are per group, spaced by their duration, inside the window', () => {
    const steps = buildSchedule({ seed: 9, kinds: ['blackhole'], clients: 10, groups: 2, jitterSec: 5, windowMs: 120_000, durations: { blackhole: 20_000 } });
    for (const g of [0, 1]) {
      const mine = steps.filter((s) => s.target === g);
      expect(mine.length).toBeGreaterThan(1);
      for (let k = 1; k < mine.length; k++) expect(mine[k]!.atMs - mine[k - 1]!.atMs).toBeGreaterThanOrEqual(25_000);
      for (const s of mine) expect(s).toMatchObject({ scope: 'group', durationMs: 20_000 });
    }
    expect(steps.every((s) => s.atMs < 120_000)).toBe(true);
  });
});

describe('cutoff plan (limit_data + slow_close)', () => {
  it('is appended to the kinds, so every older kind keeps its seeded timeline', () => {
    // 'link' (network weather) came after it.
    expect(DISRUPTIONS.indexOf('cutoff')).toBe(6);
    expect(DISRUPTIONS.slice(0, 6)).toEqual(['drop', 'flaky', 'blackhole', 'partition', 'slow-consumer', 'reset']);
    expect(planNeedsProxy(parsePlan('cutoff'))).toBe(true);
  });

  // Two library-driven targets: the replaying one must lose nothing across repeated cuts.
  const CUT = { clients: '8', msgs: '40', interval: '200', jitter: '2', plan: 'cutoff', groups: '2', 'chaos-ms': '3000', settle: '30000', seed: '21', 'reconnect-strategy': 'tuned' };
  const results = Promise.all([run('replay', CUT), run('ws', CUT)]);

  it('every cut connection is noticed no sooner than the late close, everyone comes back, replay loses nothing', { timeout: 120_000 }, async () => {
    const [replay, ws] = await results;
    for (const r of [replay!, ws!]) {
      const d = r.chaos.disruptions[0]!;
      expect(d.kind).toBe('cutoff');
      expect(d.affectedClients, r.target).toBeGreaterThan(0);
      expect(d.undetected, r.target).toBe(0);
      expect(d.detectMs.p50, r.target).toBeGreaterThanOrEqual(CUTOFF.closeDelayMs);
      expect(d.unrecovered, r.target).toBe(0);
    }
    expect(replay!.validity.valid, JSON.stringify(replay!.validity)).toBe(true);
    expect(replay!.lostDeliveries).toBe(0);
    expect(replay!.duplicates).toBe(0);
    expect(ws!.lostDeliveries).toBeGreaterThan(0);
  });
});

describe('partition plan across every local target', () => {
  // Library reconnects use the tuned strategy (cap 5 s): with @anycable/core's default backoff a
  // client refused during the partition may wait 3-18 s for its next attempt, which would test the
  // backoff, not recovery. The settle phase ends as soon as everyone is back.
  const SMALL = { clients: '12', msgs: '48', interval: '200', jitter: '3', plan: 'partition', groups: '2', 'chaos-ms': '2000', settle: '30000', seed: '77', 'reconnect-strategy': 'tuned' };
  const results = Promise.all(['ws', ...(uwsAvailability().available ? ['uws'] : []), 'socketio', 'socketio-csr', 'replay'].map((t) => run(t, SMALL)));

  it('every target sees the same seeded timeline', async () => {
    const all = await results;
    const planned = (r: JitterResult) => r.chaos.timeline.map((e) => [e.kind, e.target, e.plannedAtMs]);
    for (const r of all) {
      expect(r.chaos.timeline.length).toBeGreaterThan(0);
      expect(planned(r)).toEqual(planned(all[0]!));
      expect(r.chaos.groups).toBe(2);
    }
  });

  it('a partition is noticed at once, everyone comes back, and replaying targets lose nothing', async () => {
    const all = await results;
    for (const r of all) {
      const d = r.chaos.disruptions[0]!;
      expect(r.validity.valid, `${r.target}: ${JSON.stringify(r.validity)}`).toBe(true);
      expect(d.kind).toBe('partition');
      expect(d.affectedClients, r.target).toBeGreaterThan(0);
      expect(d.undetected, r.target).toBe(0);
      // The proxy closes every connection when disabled: detection is immediate, not a ping timeout.
      expect(d.detectMs.p95, r.target).toBeLessThan(1000);
      expect(d.unrecovered, r.target).toBe(0);
      // Nobody can come back before the partition lifts.
      expect(d.recoverMs.p50, r.target).toBeGreaterThanOrEqual(1900);
      expect(d.curve.length, r.target).toBeGreaterThan(0);
    }
    const by = Object.fromEntries(all.map((r) => [r.target, r]));
    expect(by.ws!.lostDeliveries).toBeGreaterThan(0);
    if (by.uws) expect(by.uws.lostDeliveries).toBeGreaterThan(0);
    expect(by.socketio!.lostDeliveries).toBeGreaterThan(0);
    for (const t of ['socketio-csr', 'replay']) {
      expect(by[t]!.lostDeliveries, t).toBe(0);
      expect(by[t]!.duplicates, t).toBe(0);
      expect(by[t]!.outOfOrder, t).toBe(0);
    }
  });
});

describe('blackhole plan: how long each stack takes to notice a half-open connection', () => {
  // One 50 s blackhole on every client, starting 5-5.5 s into publishing. Detection does not
  // depend on the reconnect strategy; recovery after the lift does, so it is the tuned one.
  const BH = { clients: '6', msgs: '24', interval: '250', jitter: '0.5', plan: 'blackhole', groups: '1', settle: '30000', seed: '5', 'reconnect-strategy': 'tuned' };
  const results = Promise.all([run('replay', BH), run('socketio', BH)]);

  it('replay clients notice within their ping timeout; default Socket.IO needs its ping interval plus timeout', { timeout: 180_000 }, async () => {
    const [replay, sio] = await results;
    const r = replay!.chaos.disruptions[0]!;
    const s = sio!.chaos.disruptions[0]!;
    expect(r.affectedClients).toBe(6);
    expect(s.affectedClients).toBe(6);
    // @anycable/core: stale after 2 missed pings x 3 s, checked every ~3 s.
    expect(r.undetected).toBe(0);
    expect(r.detectMs.max).toBeLessThanOrEqual(11_000);
    // Socket.IO: no ping for pingInterval (25 s) + pingTimeout (20 s) since the last one.
    expect(s.undetected).toBe(0);
    expect(s.detectMs.p50).toBeGreaterThanOrEqual(20_000);
    expect(s.detectMs.p50).toBeGreaterThan(2 * r.detectMs.p50);
    // Once lifted, everyone comes back and the replay server delivers everything exactly once.
    expect(r.unrecovered).toBe(0);
    expect(replay!.lostDeliveries).toBe(0);
    expect(replay!.duplicates).toBe(0);
    expect(replay!.outOfOrder).toBe(0);
  });
});
