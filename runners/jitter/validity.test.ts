import { describe, expect, it } from 'vitest';
import { withTarget } from '../../engine/measure/local-target.ts';
import { renderReport } from '../../engine/pages/index.ts';
import { jitterModule } from './module.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { parseJitterOptions } from './options.ts';
import { comparisonRows } from './table.ts';
import { runJitter } from './run.ts';
import type { JitterResult } from './result.ts';

/**
 * The resilience-only validity rules on real runs: the ws server on port 0, real ws clients over
 * loopback, the real publisher, drops on the seeded schedule.
 */
const run = (values: Record<string, string | number>, target = 'ws') => withTarget(getTarget(target), undefined, (url) => runJitter(parseJitterOptions({ values: { target, ramp: 200, seed: 21, ...values }, origin: 'test' }), url).result);
const codes = (r: JitterResult) => r.validity.flags.map((f) => `${f.code}:${f.severity}`);

describe('jitter validity on real runs', () => {
  it('NO_DISRUPTIONS: 20 msgs every 200 ms with --jitter 2 publish for 4 s, before the first drop (5 s + U(0, 2 s)): not a resilience result', { timeout: 60_000 }, async () => {
    const r = await run({ clients: 5, msgs: 20, interval: 200, jitter: 2, settle: 1000 });
    expect(r.jitterEvents).toBe(0);
    expect(r.chaos.timeline).toEqual([]);
    expect(r.disruptionWindow).toEqual({ planned: 0, applied: 0, windowMs: 4000 });
    expect(codes(r)).toContain('NO_DISRUPTIONS:fatal');
    expect(r.validity.valid).toBe(false);
    expect(renderReport(r, { command: 'test' }, [jitterModule])).toContain('this run says nothing about resilience');
  });

  it('NO_DISRUPTIONS: a partition plan publishing for 4 s never partitions anything', { timeout: 60_000 }, async () => {
    const r = await run({ clients: 4, msgs: 20, interval: 200, jitter: 2, plan: 'partition', groups: 1, chaosMs: 1000, settle: 1000 });
    expect(r.chaos.plan).toBe('partition');
    expect(r.disruptionWindow).toEqual({ planned: 0, applied: 0, windowMs: 4000 });
    expect(codes(r)).toContain('NO_DISRUPTIONS:fatal');
  });

  it('NO_DISRUPTIONS stays off when drops land inside the window, and when none were asked for (--jitter 0)', { timeout: 60_000 }, async () => {
    const dropped = await run({ clients: 4, msgs: 60, interval: 120, jitter: 0.5, 'jitter-ms': 300, settle: 4000 });
    const why = JSON.stringify({ window: dropped.disruptionWindow, flags: dropped.validity.flags, timeline: dropped.chaos.timeline });
    expect(dropped.disruptionWindow!.applied, why).toBeGreaterThan(0);
    expect(codes(dropped), why).not.toContain('NO_DISRUPTIONS:fatal');
    const calm = await run({ clients: 3, msgs: 10, interval: 50, jitter: 0, settle: 1000 });
    expect(calm.disruptionWindow).toBeUndefined();
    // RUNNER_LOOP_LAG (a loaded box) blames the runner, never the target: filtered as in the other runner tests.
    expect(calm.validity.valid, JSON.stringify(calm.validity)).toBe(true);
    expect(calm.validity.flags.filter((f) => f.code !== 'RUNNER_LOOP_LAG')).toEqual([]);
  });

  it('CLIENTS_OFFLINE_AT_END: clients dropped just before the end, with a settle shorter than their backoff, are counted and their missing deliveries booked as not back by the end', { timeout: 60_000 }, async () => {
    // socketio-csr reconnects by itself after 2 s ±50% (the library default). Publishing lasts
    // 5.2 s and every client is dropped at 5-5.2 s; a 400 ms settle ends the run before any can be back.
    const r = await run({ clients: 6, msgs: 52, interval: 100, jitter: 0.2, settle: 400 }, 'socketio-csr');
    const dropped = new Set(r.chaos.timeline.filter((e) => e.applied).map((e) => e.target));
    expect(dropped.size).toBeGreaterThan(0);
    expect(r.offlineAtEnd!.clients).toBe(dropped.size);
    // Their loss is part of lostDeliveries, booked apart; the clients still connected lost (almost) nothing.
    expect(r.offlineAtEnd!.lostDeliveries).toBeGreaterThan(0);
    expect(r.offlineAtEnd!.lostDeliveries).toBeLessThanOrEqual(r.lostDeliveries);
    expect(r.lostDeliveries - r.offlineAtEnd!.lostDeliveries).toBeLessThanOrEqual(6 - dropped.size);
    const flag = r.validity.flags.find((f) => f.code === 'CLIENTS_OFFLINE_AT_END');
    expect(flag).toMatchObject({ severity: 'warning' });
    expect(flag!.message).toContain(`${dropped.size} clients`);
    expect(renderReport(r, { command: 'test' }, [jitterModule])).toContain(`${r.offlineAtEnd!.lostDeliveries.toLocaleString('en-US')} of them not back by the end`);
    expect(comparisonRows([r])).toContainEqual(['Deliveries lost', `${r.lostDeliveries.toLocaleString('en-US')} (${r.offlineAtEnd!.lostDeliveries.toLocaleString('en-US')} not back by the end: ${dropped.size} clients still offline)`]);
  });

  it('the comparison table has no "Replay" rows: ws has no replay, and the figure is every delivery\'s latency', { timeout: 60_000 }, async () => {
    const r = await run({ clients: 3, msgs: 10, interval: 50, jitter: 0, settle: 1000 });
    const rows = comparisonRows([r]);
    expect(rows.filter((x) => /replay/i.test(x[0]!))).toEqual([]);
    expect(rows).toContainEqual(['Latency p95', expect.stringMatching(/^\d+ ms$/)]);
    expect(renderReport(r, { command: 'test' }, [jitterModule])).not.toContain('Replay p95');
  });
});
