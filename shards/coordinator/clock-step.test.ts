import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseOptions } from '../../lib/options.ts';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { shardResult } from '../merge/fixtures.ts';
import { startRunner, tempResultsDir, type RunnerProcess } from '../runner/testing.ts';
import { COORD_OPTIONS } from './options.ts';
import { runMultiShard } from './run.ts';
import { startStandIn, type StandIn } from './stand-in.ts';

const TOKEN = 'clock-step-token';
const opts = (shards: string[], extra: Record<string, unknown> = {}) =>
  parseOptions(COORD_OPTIONS, { values: { shards: shards.join(','), token: TOKEN, target: 'replay', pollMs: 50, timeoutSec: 60, ...extra } });

describe('CLOCK_STEPPED from a shard\'s own clock report', () => {
  const open: StandIn[] = [];
  afterEach(async () => void (await Promise.all(open.splice(0).map((s) => s.close()))));
  const drift = (maxStepMs: number) => ({ wallMs: 10_000 + maxStepMs, monotonicMs: 10_000, endStepMs: maxStepMs, maxStepMs, samples: 40, sampleEveryMs: 250 });

  it('a 5 s step is fatal for a latency test and names the shard; within budget it passes', async () => {
    const a = await startStandIn({ token: TOKEN, result: { ...shardResult({ clients: 5, msgs: 2, latenciesMs: Array(10).fill(5) }), clockDrift: drift(0.4) } });
    const b = await startStandIn({ token: TOKEN, result: { ...shardResult({ clients: 5, msgs: 2, latenciesMs: Array(10).fill(5005) }), clockDrift: drift(5000) } });
    open.push(a, b);
    const r = await runMultiShard(opts([a.url, b.url]), {}, () => {});
    const f = r.validity.flags.find((x) => x.code === 'CLOCK_STEPPED')!;
    expect(f).toMatchObject({ severity: 'fatal', shards: ['s2'] });
    expect(f.message).toContain('stepped 5000 ms');
    expect(r.exitCode).toBe(2);
    const loose = await runMultiShard(opts([a.url, b.url], { clockStepMs: 6000 }), {}, () => {});
    expect(loose.validity.flags.map((x) => x.code)).not.toContain('CLOCK_STEPPED');
  });

  it('a step on a counts-only (idle) shard is a warning', async () => {
    const idle = { test: 'idle', clients: 4, connected: 4, welcomed: 4, subscribed: 4, failed: 0, validity: { valid: true, flags: [] }, clockDrift: drift(5000) };
    const a = await startStandIn({ token: TOKEN, result: idle });
    open.push(a);
    const r = await runMultiShard(opts([a.url], { test: 'idle' }), {}, () => {});
    expect(r.validity.flags.find((x) => x.code === 'CLOCK_STEPPED')).toMatchObject({ severity: 'warning', shards: ['s1'] });
  });
});

/**
 * The real thing: two runner processes against one target, s2 under libfaketime (Debian's
 * `faketime`), whose wall clock is stepped +5 s while its job runs (monotonic left alone, as an
 * NTP step does). The coordinator must name s2 in CLOCK_STEPPED and refuse the latencies.
 */
const LIB = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
describe.skipIf(!existsSync(LIB))('a wall-clock step under libfaketime', () => {
  let target: ServiceHandle;
  const runners: RunnerProcess[] = [];
  const stepFile = join(mkdtempSync(join(tmpdir(), 'rr-faketime-')), 'offset');
  beforeAll(async () => {
    writeFileSync(stepFile, '+0\n');
    target = await startService('ws');
    runners.push(await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir(), TARGET_WS_URL: target.httpUrl }));
    runners.push(await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir(), TARGET_WS_URL: target.httpUrl, LD_PRELOAD: LIB, FAKETIME_TIMESTAMP_FILE: stepFile, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' }));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(runners.map((r) => r.stop()));
    await target?.stop();
  });

  it('s2 stepped +5 s mid-run: CLOCK_STEPPED names s2, the run is invalid', async () => {
    const o = parseOptions(COORD_OPTIONS, { values: { shards: runners.map((r) => r.url).join(','), token: TOKEN, target: 'ws', test: 'latency', perShardN: 4, pollMs: 200, timeoutSec: 60 } });
    const r = await runMultiShard(o, { msgs: '20', interval: '100', ramp: '100', settle: '500', seed: '3' }, (l) => {
      if (l.startsWith('[s2] job ')) setTimeout(() => writeFileSync(stepFile, '+5s\n'), 400);
    });
    expect(r.perShard.map((s) => s.status), JSON.stringify(r.perShard)).toEqual(['done', 'done']);
    const f = r.validity.flags.find((x) => x.code === 'CLOCK_STEPPED');
    expect(f, JSON.stringify(r.validity.flags)).toMatchObject({ severity: 'fatal', shards: ['s2'] });
    expect(r.exitCode).toBe(2);
  }, 90_000);
});
