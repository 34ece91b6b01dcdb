import { describe, expect, it } from 'vitest';
import { respawn, startService } from '../../../services/common/spawn.ts';
import { LosesOneAnswer, startTestServer } from '../../../services/replay-server/testing.ts';
import { sleep } from '../../../lib/time.ts';
import { getTarget } from '../../../engine/targets/index.ts';
import { scenario } from '../scenarios/soak.ts';
import type { ScenarioContext, ScenarioResult } from '../types.ts';
import { parseSoakOptions, type SoakOptions } from './options.ts';
import { runSoak, type SoakDetail } from './run.ts';

/**
 * Short real soaks: real services on port 0, real lean clients over loopback, the one publisher,
 * ledger and latency recorder. 30 s at a light load each (the four targets side by side), so the
 * rules see 12 judged windows of 2 s.
 */
const ctx = (target: string, url?: string): ScenarioContext & { lines: string[] } => {
  const lines: string[] = [];
  return { target: getTarget(target), ...(url ? { url } : {}), seed: 1, signal: new AbortController().signal, log: (l) => lines.push(l), progress: () => {}, lines };
};
const detail = (r: ScenarioResult) => r.detail as unknown as SoakDetail;
const explain = (r: ScenarioResult) => JSON.stringify({ rules: detail(r).judgement.rules, flags: r.validity.flags, series: detail(r).series });

describe('soak against each local target', () => {
  // Four soaks share this process and the machine with other test files: a late window's p99 at a
  // few ms moves by 10+ ms with the neighbours' load (CI: 4.5 -> 18.5 ms on ws). This test judges
  // that a healthy target passes and that the series is measured; the latency rule's own trip is
  // judged in rules.test.ts ('a latency creep fails the latency rule').
  const opts = (target: string): SoakOptions => parseSoakOptions({ values: { target, durationSec: 30, sampleSec: 2, warmupSec: 6, clients: 20, rate: 10, ramp: 100, p99SlackMs: 100 }, origin: 'test' });

  for (const target of ['replay', 'ws', 'socketio', 'socketio-csr']) {
    it.concurrent(`${target}: 30 s of steady traffic passes every rule (memory: passes or is too short to judge)`, { timeout: 120_000 }, async () => {
      const r = await scenario.run(ctx(target), opts(target));
      const d = detail(r);
      // Memory alone may be left unjudged: 30 s can end before the target's first full GC (CI:
      // socketio-csr 100 -> 116 MB, then flat at 0.75 MB/min over 180 s), and a slope over under
      // minSlopeSpanSec is INSUFFICIENT_DURATION by design, never a pass or a fail.
      const memory = d.judgement.rules.find((x) => x.rule === 'memory')!;
      expect(['pass', 'insufficient'], explain(r)).toContain(memory.status);
      // Latency may be left unjudged for the rig alone: a late window in which this process's own
      // event loop lagged (four soaks share it, beside the other files' load) is left out of the
      // rule and flagged SOAK_RIG_LAG; with no late window left the rule is unmeasured and the
      // soak inconclusive, the target never blamed (CI-like load: 4 of 12 windows, 50-90 ms).
      const latency = d.judgement.rules.find((x) => x.rule === 'latency')!;
      expect(['pass', 'unmeasured'], explain(r)).toContain(latency.status);
      if (latency.status === 'unmeasured') expect(r.validity.flags.map((f) => f.code), explain(r)).toContain('SOAK_RIG_LAG');
      const verdict = memory.status === 'insufficient' ? 'insufficient_duration' : latency.status === 'unmeasured' ? 'inconclusive' : 'pass';
      expect(r.steps[0]!.metrics.verdict, explain(r)).toBe(verdict);
      expect(r.steps[0]!.pass).toBe(verdict === 'pass');
      expect(r.validity.valid).toBe(true);
      expect(d.judgement.rules.map((x) => [x.rule, x.status])).toEqual([['throughput', 'pass'], ['memory', memory.status], ['latency', latency.status], ['disconnects', 'pass'], ['delivery', 'pass']]);
      expect(d.series).toHaveLength(15);
      // The series is measured, not invented: every window saw deliveries at ~20 clients x 10 msg/s, RSS from /proc.
      expect(d.rssSource).toBe('proc');
      for (const w of d.series.slice(1)) {
        expect(w.deliveriesPerSec).toBeGreaterThan(100);
        expect(w.rssMb).toBeGreaterThan(10);
        expect(w.p99Ms).not.toBeNull();
      }
      expect(r.steps[0]!.ledger).toMatchObject({ lostDeliveries: 0, duplicates: 0, expectedDeliveries: 20 * 300 });
      expect(r.steps[0]!.latency!.latencyRawMs.count).toBe(6000);
      // The headline is a passed soak's sustained rate, never an unjudged one's.
      expect(r.headline.value).toBe(verdict === 'pass' ? r.steps[0]!.metrics.sustainedDeliveriesPerSec : null);
      // The report draws this run's series.
      const [section] = scenario.sections([r]);
      expect(section!.title).toBe(`Soak: ${target}: ${{ pass: 'PASS', insufficient_duration: 'INSUFFICIENT_DURATION', inconclusive: 'INCONCLUSIVE' }[verdict]}`);
      const mem = section!.charts.find((c) => c.id === `soak-memory-${target}`)!;
      expect(mem.series[0]!.values).toEqual(d.series.map((w) => w.rssMb));
    });
  }
});

describe('soak against a target that dies', () => {
  it('a killed server fails the soak: disconnects, throughput; RSS came from its /metrics while it lived', { timeout: 60_000 }, async () => {
    const svc = await startService('replay');
    try {
      const o = parseSoakOptions({ values: { target: 'replay', durationSec: 14, sampleSec: 2, warmupSec: 2, clients: 10, rate: 10, ramp: 100, drainSec: 1 }, origin: 'test' });
      const c = ctx('replay', svc.httpUrl);
      const running = runSoak(c, o);
      await sleep(9000);
      await svc.kill('SIGKILL');
      const r = await running;
      const d = detail(r);
      const rule = (id: string) => d.judgement.rules.find((x) => x.rule === id)!;
      expect(r.steps[0]!.metrics.verdict, explain(r)).toBe('fail');
      expect(rule('disconnects')).toMatchObject({ status: 'fail', value: 10 });
      expect(rule('throughput').status).toBe('fail');
      expect(d.rssSource).toBe('metrics');
      expect(d.series[0]!.rssMb).toBeGreaterThan(10);
      expect(d.series.at(-1)!.rssMb).toBeNull();
      expect(r.validity.flags.map((f) => f.code)).toContain('PARTIAL_PUBLISH');
      expect(r.failureMode).toMatch(/disconnects/);
    } finally {
      await svc.stop().catch(() => {});
    }
  });
});

describe('soak: a message stored but never acknowledged', () => {
  // What a server killed mid-publish does at random (the request written, the connection reset
  // before the 201): here the broker loses one answer on purpose, so it happens every time.
  it('its arrivals stay outside expected and the rates: UNCONFIRMED_DELIVERED, not RECEIVED_OVER_EXPECTED or DELIVERY_OVER_100', { timeout: 60_000 }, async () => {
    const t = await startTestServer({}, { broker: new LosesOneAnswer(12) });
    try {
      const o = parseSoakOptions({ values: { target: 'replay', durationSec: 8, sampleSec: 2, warmupSec: 2, clients: 5, rate: 10, ramp: 100, drainSec: 1 }, origin: 'test' });
      const r = await runSoak(ctx('replay', t.httpUrl), o);
      const codes = r.validity.flags.map((f) => [f.code, f.severity]);
      expect(codes, explain(r)).toContainEqual(['UNCONFIRMED_DELIVERED', 'warning']);
      expect(codes).toContainEqual(['PARTIAL_PUBLISH', 'warning']);
      expect(r.steps[0]!.ledger).toMatchObject({ unconfirmedDeliveries: 5, lostDeliveries: 0, expectedDeliveries: 5 * 79, receivedDeliveries: 5 * 80 });
      expect(r.validity.valid, explain(r)).toBe(true);
      expect(r.steps[0]!.metrics.deliveredPct).toBe(100);
    } finally {
      await t.close();
    }
  });
});

describe('soak against a target that restarts', () => {
  it('clients the server dropped are reconnected by the runner (retrying while it is down) and counted; the disconnects still fail the soak', { timeout: 60_000 }, async () => {
    let svc = await startService('ws');
    try {
      const o = parseSoakOptions({ values: { target: 'ws', durationSec: 16, sampleSec: 2, warmupSec: 2, clients: 10, rate: 10, ramp: 100, drainSec: 1 }, origin: 'test' });
      const running = runSoak(ctx('ws', svc.httpUrl), o);
      await sleep(6000);
      await svc.kill('SIGKILL');
      await sleep(2500); // down longer than the first reconnect's 1 s delay: that attempt must fail and be retried
      svc = (await respawn(svc)).handle;
      const r = await running;
      const d = detail(r);
      expect(d.judgement.rules.find((x) => x.rule === 'disconnects'), explain(r)).toMatchObject({ status: 'fail', value: 10 });
      expect(d.series.reduce((a, w) => a + w.reconnects, 0), explain(r)).toBe(10);
      expect(d.series.at(-1)!.connected).toBe(10);
      expect(d.series.at(-1)!.deliveriesPerSec).toBeGreaterThan(50);
      expect(r.steps[0]!.metrics.verdict).toBe('fail');
      // ws has nothing to resume: what the outage took is booked to it, and every reconnect says so.
      const lost = (r.steps[0]!.ledger as { lostDeliveries: number }).lostDeliveries;
      expect(Object.values(d.lossByCause!).reduce((a, b) => a + b, 0)).toBe(lost);
      expect(d.resumeOutcomes).toEqual({ nothing_to_resume: 10 });
    } finally {
      await svc.stop().catch(() => {});
    }
  });
});

describe('soak: the runner\'s own side', () => {
  it('an aborted soak is not the planned soak: SOAK_ABORTED, inconclusive, never a pass', { timeout: 60_000 }, async () => {
    const ac = new AbortController();
    const c = { ...ctx('ws'), signal: ac.signal };
    const o = parseSoakOptions({ values: { target: 'ws', durationSec: 30, sampleSec: 2, warmupSec: 2, clients: 5, rate: 10, ramp: 100, drainSec: 1 }, origin: 'test' });
    const t = setTimeout(() => ac.abort(), 7000);
    try {
      const r = await runSoak(c, o);
      expect(r.validity.valid).toBe(false);
      expect(r.validity.flags).toContainEqual(expect.objectContaining({ code: 'SOAK_ABORTED', severity: 'fatal' }));
      expect(r.steps[0]!.metrics.verdict).toBe('inconclusive');
      expect(r.steps[0]!.pass).toBe(false);
      expect(r.headline.value).toBeNull();
      expect(r.failureMode).toMatch(/^invalid run: .*SOAK_ABORTED/);
      expect(detail(r).series.length).toBeLessThan(15);
    } finally {
      clearTimeout(t);
    }
  });

  it('full clients (the official @anycable/core library) soak the replay server through the same interface', { timeout: 60_000 }, async () => {
    // A 100 ms p99 slack, as the four soaks above: this test judges the full clients' path, and a
    // window's p99 at a few ms moves by tens of ms with the other test files' load (CI with three
    // files at once: late 43 ms against early 12, bound 28 at the default slack).
    const r = await scenario.run(ctx('replay'), parseSoakOptions({ values: { target: 'replay', clientKind: 'full', durationSec: 14, sampleSec: 2, warmupSec: 4, clients: 10, rate: 10, ramp: 100, p99SlackMs: 100 }, origin: 'test' }));
    expect(detail(r).clientKind).toBe('full');
    expect(r.steps[0]!.metrics.verdict, explain(r)).toBe('pass');
    expect(r.steps[0]!.ledger).toMatchObject({ expectedDeliveries: 10 * 140, lostDeliveries: 0, duplicates: 0 });
  });
});
