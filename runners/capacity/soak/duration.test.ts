import { describe, expect, it } from 'vitest';
import { createWsServer } from '../../../services/ws/server.ts';
import { getTarget } from '../../../engine/targets/index.ts';
import { scenario } from '../scenarios/soak.ts';
import type { ScenarioContext } from '../types.ts';
import { parseSoakOptions } from './options.ts';
import type { SoakDetail } from './run.ts';

/**
 * A real 30 s soak whose target's memory really grows: the ws server runs in this process (its
 * /metrics reports this process's RSS) and the test keeps 1 MB of filled buffers every 250 ms,
 * about 88 MB over the 22 s of judged windows, far past both memory bounds. Growth over 22 s
 * cannot be told from a server settling or filling caches, so the verdict is
 * INSUFFICIENT_DURATION, not FAIL.
 */
describe('soak too short to judge a slope', () => {
  it('memory growing past both bounds over 22 s of judged windows: INSUFFICIENT_DURATION, every other rule judged', { timeout: 120_000 }, async () => {
    const svc = await createWsServer({ port: 0, host: '127.0.0.1', broadcastKey: '' });
    const kept: Buffer[] = [];
    const leak = setInterval(() => kept.push(Buffer.alloc(1 << 20, 7)), 250);
    try {
      const ctx: ScenarioContext = { target: getTarget('ws'), url: `http://127.0.0.1:${svc.port}`, seed: 1, signal: new AbortController().signal, log: () => {}, progress: () => {} };
      // The leak's garbage is collected in this process, which also runs the clients: its pauses
      // move a few-ms p99 by tens of ms on a loaded box (21 vs 6.5 ms in one CI run). This test
      // judges the memory rule; the latency rule gets room to pass.
      const o = parseSoakOptions({ values: { target: 'ws', durationSec: 30, sampleSec: 2, warmupSec: 6, clients: 5, rate: 10, ramp: 100, drainSec: 2, p99SlackMs: 200 }, origin: 'test' });
      const r = await scenario.run(ctx, o);
      const d = r.detail as unknown as SoakDetail;
      const memory = d.judgement.rules.find((x) => x.rule === 'memory')!;
      const why = JSON.stringify({ rules: d.judgement.rules, rss: d.series.map((w) => w.rssMb) });
      expect(d.rssSource, why).toBe('metrics');
      // The growth is real and past both bounds: judged as a slope it would FAIL.
      const fit = d.judgement.rssFit!;
      expect(memory.value!, why).toBeGreaterThan(o.maxRssSlopeMbPerMin);
      expect(fit.slopeMbPerMin * ((fit.toSec - fit.fromSec) / 60), why).toBeGreaterThan(o.rssNoiseMb);
      expect(memory.status, why).toBe('insufficient');
      // The judged span is where the sample windows fell (about 22 s; later under load), so the
      // message must name the fit's own span, and that span must be short of the 60 s minimum.
      const span = Math.round((fit.toSec - fit.fromSec) * 100) / 100;
      expect(span, why).toBeGreaterThanOrEqual(16);
      expect(span, why).toBeLessThan(60);
      expect(memory.message).toContain(`over only ${span} s of judged windows: too short to judge a slope (at least 60 s`);
      expect(r.steps[0]!.metrics.verdict, why).toBe('insufficient_duration');
      expect(r.steps[0]!.pass).toBe(false);
      expect(r.failureMode).toBe('soak too short to judge: memory');
      expect(d.judgement.rules.filter((x) => x.rule !== 'memory').map((x) => [x.rule, x.status]), why).toEqual([['throughput', 'pass'], ['latency', 'pass'], ['disconnects', 'pass'], ['delivery', 'pass']]);
      expect(scenario.sections([r])[0]!.title).toBe('Soak: ws: INSUFFICIENT_DURATION');
    } finally {
      clearInterval(leak);
      kept.length = 0;
      await svc.stop();
    }
  });
});
