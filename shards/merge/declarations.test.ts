import { describe, expect, it } from 'vitest';
import { done, shardResult } from './fixtures.ts';
import { mergeShards } from './merge.ts';
import { MULTI_MODULES } from '../runner/adapters/index.ts';
import { mergePlan } from './plan.ts';
import { resultProblem } from './schema.ts';

/** A whispers shard's result: 4 clients in rooms of 2, 10 whispers each, each heard by its one peer. */
const whispers = (received: number, latenciesMs = [5, 6, 7]) => ({
  ...shardResult({ clients: 4, msgs: 40, received, latenciesMs }),
  test: 'whispers',
  expectedDeliveries: 40,
  lostDeliveries: 40 - received,
  whispersSent: 40,
  whispersReceived: received,
  expectedReceived: 40,
  latencyMs: { p50: 0, p95: 0, p99: 0, max: 0 },
});

describe('the coordinator merges by the runners\' declarations', () => {
  it('whispers: the rate is over whispers expected, latencyMs names the merged raw percentiles', async () => {
    const { merged, validity } = await mergeShards([done('s1', whispers(40)), done('s2', whispers(30, [50]))]);
    expect(merged).toMatchObject({ whispersSent: 80, whispersReceived: 70, expectedReceived: 80, deliveryRatePct: 87.5 });
    const raw = merged.latencyRawMs as Record<string, number>;
    expect(merged.latencyMs).toEqual({ p50: raw.p50, p95: raw.p95, p99: raw.p99, max: raw.max });
    expect(validity.valid).toBe(true);
  });

  it('whispers: a shard hearing more than every client got every whisper is refused, a merged excess is fatal', async () => {
    expect(resultProblem({ ...whispers(40), whispersReceived: 161 })).toBe('whispersReceived 161 exceeds clients x whispers sent 160');
    const over = { ...whispers(40), whispersReceived: 50 };
    const { validity } = await mergeShards([done('s1', over), done('s2', over)]);
    expect(validity.flags.find((f) => f.message === 'merged whispers received 100 > expected 80')).toMatchObject({ code: 'FLEET_RECEIVED_OVER_EXPECTED', severity: 'fatal' });
  });

  it('jitter: the connection-state recovery rate from the summed resumes, null when no shard\'s target has it', async () => {
    const csr = (csrResumes: number | null, reconnects: number) => done('s', { ...shardResult({ clients: 2, msgs: 2 }), csrResumes, reconnects });
    expect((await mergeShards([csr(3, 4), csr(1, 4)])).merged).toMatchObject({ csrResumes: 4, reconnects: 8, csrResumeRatePct: 50 });
    expect((await mergeShards([csr(null, 4), csr(null, 4)])).merged).not.toHaveProperty('csrResumeRatePct');
  });

  it('a declaration alone adds a field, bounds it, derives from it and rules over it', async () => {
    const plan = mergePlan([
      {
        sum: ['widgets'],
        counts: ['widgets'],
        check: (r) => ((r.widgets as number) > 5 ? `widgets ${String(r.widgets)} exceeds 5` : undefined),
        derive: (m) => void (m.widgetsPerClient = (m.widgets as number) / (m.clients as number)),
        rules: (m) => ((m.widgets as number) > 6 ? [{ code: 'TOO_MANY_WIDGETS', severity: 'warning', message: 'many' }] : []),
      },
      { sum: ['clients'] },
    ]);
    const w = (widgets: unknown) => done('s', { ...shardResult({ clients: 2, msgs: 1 }), widgets });
    const { merged, validity, perShard } = await mergeShards([w(4), w(3), w(1.5), w(6)], { plan });
    expect(perShard.map((s) => s.error ?? s.status)).toEqual(['done', 'done', 'SHARD_RESULT_INVALID: widgets is 1.5, not an integer >= 0', 'SHARD_RESULT_INVALID: widgets 6 exceeds 5']);
    expect(merged).toEqual(expect.objectContaining({ widgets: 7, clients: 4, widgetsPerClient: 1.75 }));
    expect(merged).not.toHaveProperty('expectedDeliveries');
    expect(validity.flags.map((f) => f.code)).toContain('TOO_MANY_WIDGETS');
  });

  it('two declarations that merge one field differently are refused when the plan is built', () => {
    expect(() => mergePlan([{ sum: ['elapsedMs'] }, { max: ['elapsedMs'] }])).toThrow('merge declarations disagree: elapsedMs both summed and merged otherwise');
  });

  it('every field a fanned-out test\'s result must carry is one its own declarations merge', () => {
    for (const m of MULTI_MODULES) {
      if (!m.summary.length) continue;
      const own = mergePlan(m.merge ?? []);
      expect(m.summary.filter((f) => !own.sum.includes(f) && !own.max.includes(f)), m.name).toEqual([]);
    }
  });
});
