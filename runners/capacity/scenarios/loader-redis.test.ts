import { describe, expect, it } from 'vitest';
import { useTestRedisEnv } from '../../../services/common/redis-test-env.ts';
import { getTarget } from '../../../engine/targets/index.ts';
import { scenario as s3 } from './s3-fanout.ts';

/**
 * S3 on the replay server's Redis broker with two nodes (issue 13's fan-out): each stream's
 * subscribers alternate over the nodes and batches go to either node, so half of every stream's
 * deliveries must cross Redis. The test's own redis-server, shared through REDIS_URL.
 */
useTestRedisEnv();

describe('S3 on replay-redis', () => {
  it.each([1, 2])('with %i node(s) delivers every accepted message to every subscriber once', async (nodes) => {
    const r = await s3.run({ target: getTarget('replay-redis'), seed: 3, signal: new AbortController().signal, log: () => undefined, progress: () => undefined }, s3.parse({ connections: 40, streams: 4, rates: '40', stepSec: 1, drainMs: 500, loaders: 2, nodes, maxP99Ms: 60_000, maxLoaderLagMs: 60_000, maxLoaderCpuPct: 1000, maxPublisherLateMs: 60_000 }));
    const s = r.steps[0]!;
    expect(s.pass).toBe(true);
    expect(s.ledger!.expectedDeliveries).toBe(Number(s.metrics.published) * 10);
    expect(s.ledger).toMatchObject({ lostDeliveries: 0, duplicates: 0, foreign: 0 });
    expect(r.params.nodes).toBe(nodes);
  });
});

describe('name:K target labels in the suite', () => {
  it('replay-redis and replay-redis:2 side by side in one run, each labelled, the :2 one on two nodes', async () => {
    const { parseCapacityOptions } = await import('../options.ts');
    const { runCapacity } = await import('../run.ts');
    const o = parseCapacityOptions({ values: { targets: 'replay-redis,replay-redis:2', scenarios: 'S3', s3Connections: 40, s3Streams: 4, s3Rates: '40', s3StepSec: 1, s3DrainMs: 500, s3MaxP99Ms: 60_000, s3MaxLoaderLagMs: 60_000, s3MaxLoaderCpuPct: 1000, s3MaxPublisherLateMs: 60_000 }, origin: 'CLI' });
    const logs: string[] = [];
    const run = await runCapacity(o, { log: (l) => logs.push(l) });
    expect(run.results.map((r) => r.target)).toEqual(['replay-redis', 'replay-redis:2']);
    for (const r of run.results) expect(r.steps[0]).toMatchObject({ pass: true, ledger: { lostDeliveries: 0, duplicates: 0 } });
    expect(run.results[1]!.params.nodes).toBe(2);
    // Two nodes really started: the loader says how many node URLs it spread connections over.
    expect(logs.filter((l) => / on 2 node\(s\)/.test(l))).toHaveLength(1);
    expect(logs.filter((l) => / on 1 node\(s\)/.test(l))).toHaveLength(1);
  });

  it('sweep honours the label too: replay-redis:2 sweeps on two nodes', async () => {
    const { parseCapacityOptions } = await import('../options.ts');
    const { runCapacity } = await import('../run.ts');
    const o = parseCapacityOptions({ values: { targets: 'replay-redis:2', scenarios: 'sweep', sweepConnections: 20, sweepStreams: 2, sweepRate: 20, sweepLoaderCounts: '1', sweepStepSec: 1, sweepDrainMs: 500, sweepMaxP99Ms: 60_000, sweepMaxLoaderLagMs: 60_000, sweepMaxLoaderCpuPct: 1000, sweepMaxPublisherLateMs: 60_000 }, origin: 'CLI' });
    const logs: string[] = [];
    const run = await runCapacity(o, { log: (l) => logs.push(l) });
    expect(run.results[0]!.params.nodes).toBe(2);
    expect(logs.filter((l) => /sweep on 2 node\(s\)/.test(l))).toHaveLength(1);
    expect(run.results[0]!.steps[0]).toMatchObject({ ledger: { lostDeliveries: 0, duplicates: 0 } });
  });

  it('refuses K nodes of a target without a shared broker, K with url, and K with a one-process scenario', async () => {
    const { parseCapacityOptions } = await import('../options.ts');
    const p = (values: Record<string, unknown>) => () => parseCapacityOptions({ values, origin: 'CLI' });
    expect(p({ targets: 'replay:2', scenarios: 'S3' })).toThrow(/shared broker/);
    expect(p({ targets: 'replay-redis:9', scenarios: 'S3' })).toThrow(/1\.\.8/);
    expect(p({ targets: 'replay-redis:2', scenarios: 'S3,S1' })).toThrow(/only S3, S4, S5, sweep/);
    expect(p({ targets: 'replay-redis:2', scenarios: 'S3', url: 'http://127.0.0.1:1' })).toThrow(/cannot go with url/);
    expect(p({ targets: 'replay-redis,replay-redis', scenarios: 'S3' })).toThrow(/twice/);
  });
});
