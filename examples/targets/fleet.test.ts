import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from '../../lib/options.ts';
import { COORD_OPTIONS } from '../../shards/coordinator/options.ts';
import { runMultiShard } from '../../shards/coordinator/run.ts';
import { startRunner, tempResultsDir, type RunnerProcess } from '../../shards/runner/testing.ts';
import { jsonWsServer, sseServer } from './servers.ts';

/**
 * The two worked examples through the fleet (issue 37's acceptance): two real runner shards, each
 * loading the example's file from TARGET_MODULES with TARGET_<NAME>_URL on the example's server,
 * and the coordinator naming the target as it names a built-in. Jitter's loss causes add up over
 * the merge; capacity S1 is idle over the shards (the coordinator's S1: connections held and summed).
 */
const TOKEN = 'fleet-token-0123456789';

type Server = { url: string; close: () => unknown };
const EXAMPLES: { name: string; file: string; env: string; start: () => Promise<Server> }[] = [
  { name: 'json-ws', file: 'examples/targets/json-ws.ts', env: 'TARGET_JSON_WS_URL', start: jsonWsServer },
  // A history long enough for every drop, so each reconnect is history-filled.
  { name: 'sse', file: 'examples/targets/sse.ts', env: 'TARGET_SSE_URL', start: () => sseServer({ history: 1000, retryMs: 400 }) },
];

describe.each(EXAMPLES)('example $name over two runner shards and the coordinator', (ex) => {
  let server: Server;
  const shards: RunnerProcess[] = [];
  beforeAll(async () => {
    server = await ex.start();
    shards.push(...(await Promise.all([0, 1].map(() => startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir(), TARGET_MODULES: ex.file, [ex.env]: server.url })))));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(shards.map((s) => s.stop()));
    await server?.close();
  });
  const coord = (extra: Record<string, unknown>) => parseOptions(COORD_OPTIONS, { values: { shards: shards.map((s) => s.url).join(','), token: TOKEN, target: ex.name, pollMs: 200, timeoutSec: 90, ...extra } });

  it('jitter with drops: both shards done, counts and loss causes add up over the merge, the file behaved', async () => {
    const lines: string[] = [];
    const r = await runMultiShard(coord({ test: 'jitter', perShardN: 8 }), { msgs: '60', interval: '150', jitter: '1', jitterMs: '300', settle: '3000', seed: '11' }, (l) => lines.push(l));
    expect(r.perShard.map((s) => s.status), lines.join('\n')).toEqual(['done', 'done']);
    const m = r.merged as Record<string, unknown> & { lossByCause?: Record<string, number>; resumeOutcomes?: Record<string, number> };
    expect(m).toMatchObject({ clients: 16, connectedClients: 16, published: 60, publishedTotal: 120, expectedDeliveries: 960 });
    expect(m.reconnects as number).toBeGreaterThan(0);
    expect(m.lossByCause).toBeTypeOf('object');
    expect(Object.values(m.lossByCause ?? {}).reduce((a, b) => a + b, 0)).toBe(m.lostDeliveries);
    expect(Object.values(m.resumeOutcomes ?? {}).reduce((a, b) => a + b, 0)).toBe(m.reconnects);
    // SSE resumes from the server's history (long enough here): every reconnect is history-filled on every shard.
    if (ex.name === 'sse') expect(m).toMatchObject({ lostDeliveries: 0, resumeOutcomes: { history_filled: m.reconnects } });
    expect(m.targetModule).toEqual({ file: expect.stringContaining(ex.file), faults: [] });
    expect(r.validity.flags.filter((f) => f.code !== 'RUNNER_LOOP_LAG'), JSON.stringify(r.validity.flags)).toEqual([]);
  }, 120_000);

  it('capacity S1 (idle over the shards): every connection held, summed over the shards', async () => {
    const r = await runMultiShard(coord({ test: 'idle', perShardN: 20 }), { hold: '1', ramp: '200', workers: '1' }, () => {});
    expect(r.perShard.map((s) => s.status), JSON.stringify(r.perShard)).toEqual(['done', 'done']);
    expect(r.merged).toMatchObject({ clients: 40, subscribed: 40, failed: 0 });
    expect(r.perShard.map((s) => s.connected)).toEqual([20, 20]);
  }, 120_000);

  it('a target name no shard serves is refused before anything is enqueued, naming what they serve', async () => {
    await expect(runMultiShard(coord({ test: 'jitter', target: `${ex.name}-nope` }), { seed: '1' }, () => {})).rejects.toMatchObject({
      code: 'RR_ERR_TARGET_UNKNOWN',
      message: expect.stringContaining(`no shard serves target "${ex.name}-nope" for jitter (POST /bench-jitter-${ex.name}-nope); the shards serve: `),
    });
  });
});
