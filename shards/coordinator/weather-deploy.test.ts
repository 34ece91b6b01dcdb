import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from '../../lib/options.ts';
import { LocalNodes } from '../../engine/measure/local-nodes.ts';
import { getTarget } from '../../engine/targets/index.ts';
import type { WeatherResult } from '../../runners/jitter/weather.ts';
import { api, startRunner, tempResultsDir, type RunnerProcess } from '../runner/testing.ts';
import { COORD_OPTIONS } from './options.ts';
import { runMultiShard } from './run.ts';

/**
 * The weather's deploy over two real runner shards and one shared target: the publishing shard
 * restarts the target through its operator's AVALANCHE_RESTART_COMMAND (here a SIGTERM to the
 * target, which a supervisor starts again on its port, as a platform would); the subscribe-only
 * shard never restarts it, but its clients are cut all the same. Merged condition by condition.
 */
const TOKEN = 'deploy-token';
let nodes: LocalNodes;
const runners: RunnerProcess[] = [];

beforeAll(async () => {
  nodes = await LocalNodes.start(getTarget('ws'), 1);
  nodes.supervise(true);
  const common = { BENCH_RUNNER_TOKEN: TOKEN, TARGET_WS_URL: nodes.urls[0]! };
  runners.push(await startRunner({ ...common, RESULTS_DIR: tempResultsDir(), AVALANCHE_RESTART_COMMAND: `kill -TERM ${nodes.handles[0]!.pid}` }));
  runners.push(await startRunner({ ...common, RESULTS_DIR: tempResultsDir() }));
}, 60_000);
afterAll(async () => {
  await Promise.all(runners.map((r) => r.stop()));
  await nodes?.close();
});

describe('weather deploy over runner shards', () => {
  it('the publishing shard restarts the shared target once; every shard\'s clients are cut; the merge books it per condition', async () => {
    const coord = parseOptions(COORD_OPTIONS, { values: { shards: runners.map((r) => r.url).join(','), token: TOKEN, target: 'ws', pollMs: 200, timeoutSec: 120, sharedStream: true, clockExchanges: 4, test: 'jitter', perShardN: 4 } });
    // 10 s of publishing with the restart at ~2.5 s, so the target is back while messages are still
    // accepted (cli/bench-weather.test.ts: a loaded box kept ws down past 6 s, and a restart that
    // outlives the publishing leaves ws nothing to lose).
    const r = await runMultiShard(coord, { msgs: '100', interval: '100', jitter: '0', ramp: '100', settle: '6000', seed: '5', weather: 'good-wifi:50,deploy:50', weatherScale: '0.1' }, () => {});
    expect(r.perShard.map((s) => s.status), JSON.stringify(r.perShard)).toEqual(['done', 'done']);
    const [pub, sub] = await Promise.all(r.perShard.map(async (s, i) => (await api(runners[i]!.url, `/jobs/${s.jobId}`, { token: TOKEN })).body));
    // One restart, by the publisher, through its command; the supervisor saw the target exit once and started it again.
    const restarts = (x: { result: { chaos: { timeline: { kind: string; applied: boolean }[] } } }) => x.result.chaos.timeline.filter((e) => e.kind === 'restart');
    const why = JSON.stringify({ pub: { timeline: pub.result.chaos.timeline, validity: pub.result.validity, disconnectReasons: pub.result.disconnectReasons }, sub: { timeline: sub.result.chaos.timeline, disconnectReasons: sub.result.disconnectReasons }, supervised: nodes.supervised });
    expect(restarts(pub), why).toHaveLength(1);
    expect(restarts(pub)[0]!.applied, why).toBe(true);
    expect(restarts(sub), why).toHaveLength(0);
    await nodes.settleSupervised();
    expect(nodes.supervised, why).toHaveLength(1);
    expect(nodes.supervised[0]!.newPid).toBeGreaterThan(0);
    // The subscriber's clients were cut by it too (ws keeps nothing: lost while offline).
    expect(sub.result.disconnectReasons.server_closed, why).toBeGreaterThan(0);
    const w = r.merged.weather as WeatherResult;
    expect(w.conditions.map((c) => [c.condition, c.clients]), JSON.stringify(w.conditions)).toEqual([['good-wifi', 4], ['deploy', 4]]);
    for (const c of w.conditions) expect(c.disruptions.find((d) => d.kind === 'restart')?.events, `${c.condition}: ${JSON.stringify(c.disruptions)}`).toBe(1);
    expect(r.merged.lossByCause, JSON.stringify(r.merged.lossByCause)).toHaveProperty('offline_nothing_to_resume');
    // Refused broadcasts while the target was down are the deploy's: no fatal flag from the shards.
    expect(pub.result.validity.valid, JSON.stringify(pub.result.validity)).toBe(true);
  }, 150_000);
});
