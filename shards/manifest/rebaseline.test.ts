import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService } from '../../services/common/spawn.ts';
import { deadUrl, startStandIn } from '../coordinator/stand-in.ts';
import { shardResult } from '../merge/fixtures.ts';
import { historyMain, rebaselineMain } from './cli.ts';
import { historyTrends } from './history-page.ts';
import { readHistory } from './store.ts';
import type { Manifest } from './schema.ts';

/**
 * End to end: real tiny jitter runs on embedded targets through `bench:rebaseline`, judged
 * against hand-set baselines that a correct run must meet (ok), miss by a drift, or miss past a
 * hard threshold; an unreachable target makes the run invalid; a replay server with its history
 * cut to one message loses what it should have replayed and regresses.
 */
const dir = mkdtempSync(join(tmpdir(), 'rr-rebaseline-'));
const TINY = { clients: 5, msgs: 20, interval: 50, jitter: 0, ramp: 100, settle: 1000, seed: 7 };
const manifest: Manifest = {
  version: 1,
  tests: [
    { id: 'tiny-ok', category: 'jitter', runner: 'jitter', target: 'ws', params: TINY, baseline: { deliveryRatePct: { value: 100, direction: 'higher', driftThresholdPct: 1 }, lostDeliveries: { value: 0, direction: 'lower' }, published: { value: 20, direction: 'higher' } } },
    // 20 published against a baseline of 25: 20% worse than a 10% drift threshold, no hard threshold.
    { id: 'tiny-drift', category: 'jitter', runner: 'jitter', target: 'ws', params: TINY, baseline: { deliveryRatePct: { value: 100, direction: 'higher' }, published: { value: 25, direction: 'higher', driftThresholdPct: 10 } } },
    { id: 'tiny-regress', category: 'jitter', runner: 'jitter', target: 'ws', params: TINY, baseline: { published: { value: 25, direction: 'higher', driftThresholdPct: 10, hardThreshold: 22 } } },
  ],
};
const file = join(dir, 'manifest.json');
writeFileSync(file, JSON.stringify(manifest));

const io = (env: Record<string, string | undefined> = {}) => {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s), env: { REBASELINE_MANIFEST: file, OUTPUT_DIR: dir, NO_COLOR: '1', ...env }, tty: false } };
};
const stops: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await Promise.all(stops.map((s) => s()));
});

describe('bench:rebaseline end to end on tiny real jitter runs', () => {
  it('prints baseline, measured, delta and verdict per metric; exit 1 when one test regresses', async () => {
    const x = io();
    const code = await rebaselineMain([], x.io);
    const text = x.out.join('');
    expect(text).toMatch(/^OK {2}tiny-ok/m);
    expect(text).toMatch(/^DRIFT {2}tiny-drift/m);
    expect(text).toMatch(/^REGRESS {2}tiny-regress/m);
    expect(text).toMatch(/published +↑ +25 +20 +-5 \(-20%\) +drift/);
    expect(text).toMatch(/published +↑ +25 +20 +-5 \(-20%\) +regress +past the hard threshold 22/);
    expect(text).toContain('3 tests: 1 regress, 0 invalid, 0 failed, 1 drift');
    expect(code).toBe(1);
    const runs = readdirSync(join(dir, 'runs'));
    expect(runs).toHaveLength(1);
    expect(readdirSync(join(dir, 'runs', runs[0]!)).sort()).toEqual(['tiny-drift.json', 'tiny-ok.json', 'tiny-regress.json']);
    const rec = JSON.parse(readFileSync(join(dir, 'tiny-ok.json'), 'utf8'));
    expect(rec).toMatchObject({ id: 'tiny-ok', verdict: 'ok', valid: true, where: 'local' });
    expect(rec.executions[0].result.latencyHistogram.count).toBe(100);
  });

  it('drift alone exits 0; FILTER picks tests; DRY_RUN runs nothing', async () => {
    const x = io({ FILTER: 'tiny-ok,tiny-drift' });
    expect(await rebaselineMain([], x.io)).toBe(0);
    expect(x.out.join('')).toContain('2 tests: 0 regress, 0 invalid, 0 failed, 1 drift');
    const d = io({ DRY_RUN: '1', FILTER: 'regress' });
    expect(await rebaselineMain([], d.io)).toBe(0);
    expect(d.out.join('')).toMatch(/^tiny-regress {2}jitter on ws \(local\)/m);
    expect(d.out.join('')).toContain('1 tests');
    expect(readdirSync(join(dir, 'runs'))).toHaveLength(2);
  });

  it('an unreachable target is reported as invalid, never a pass, and exits 2', async () => {
    const x = io({ FILTER: 'tiny-ok', TARGET_WS_URL: await deadUrl() });
    expect(await rebaselineMain([], x.io)).toBe(2);
    const text = x.out.join('');
    expect(text).toMatch(/^(INVALID|FAILED) {2}tiny-ok/m);
    expect(text).not.toMatch(/^OK/m);
  });

  it('history prints each metric\'s trend across the stored runs', async () => {
    const x = io({ FILTER: 'tiny-ok' });
    expect(await historyMain([], x.io)).toBe(0);
    const text = x.out.join('');
    expect(text).toMatch(/^tiny-ok \(jitter on ws\), last 3 runs; verdicts: ok ok (invalid|failed)/m);
    expect(text).toMatch(/deliveryRatePct +100 +100 +invalid +→/);
    const one = io({ FILTER: 'tiny-ok', LAST: '1' });
    await historyMain([], one.io);
    expect(one.out.join('')).toMatch(/last 1 runs/);
    const none = io({ OUTPUT_DIR: join(dir, 'nothing') });
    expect(await historyMain([], none.io)).toBe(1);
    expect(none.err.join('')).toContain('no stored rebaseline runs');
  });

  it('history --html writes one trend chart per metric over the stored runs, drift marked', async () => {
    const x = io({ FILTER: 'tiny-ok,tiny-drift' });
    expect(await historyMain(['--html'], x.io)).toBe(0);
    const file = join(dir, 'history.html');
    expect(x.err.join('')).toContain(`report: ${file}`);
    const history = readHistory(dir);
    const trends = historyTrends(history, { last: 5, filter: 'tiny-ok,tiny-drift' });
    const published = trends.find((t) => t.metric === 'tiny-drift published')!;
    // Two stored runs of tiny-drift, both 20 published against a baseline of 25: drift each time.
    expect(published.runs.map((r) => [r.value, r.baseline, r.verdict])).toEqual([[20, 25, 'drift'], [20, 25, 'drift']]);
    // tiny-ok's third run was invalid (dead target): no value to draw, so two points, not three.
    expect(trends.find((t) => t.metric === 'tiny-ok deliveryRatePct')!.runs.map((r) => r.value)).toEqual([100, 100]);
    const html = readFileSync(file, 'utf8');
    for (const t of trends) expect(html).toContain(`trend-${t.metric.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`);
    expect(html).not.toContain('tiny-regress');
    expect(html).toContain('npm run bench:rebaseline:history -- ');
  });

  it('a replay server with its history cut to one message regresses against a healthy baseline', async () => {
    const broken = await startService('replay', { args: ['--history-limit', '1'] });
    stops.push(() => broken.stop());
    const m: Manifest = {
      version: 1,
      tests: [{ id: 'replay-history', category: 'jitter', runner: 'jitter', target: 'replay', params: { clients: 10, msgs: 100, interval: 100, jitter: 2, jitterMs: 1500, ramp: 100, settle: 4000, reconnectStrategy: 'tuned', seed: 11 }, baseline: { deliveryRatePct: { value: 100, direction: 'higher', driftThresholdPct: 1, hardThreshold: 99 } } }],
    };
    const f = join(dir, 'replay.json');
    writeFileSync(f, JSON.stringify(m));
    const healthy = io({ REBASELINE_MANIFEST: f });
    expect(await rebaselineMain([], healthy.io), healthy.out.join('')).toBe(0);
    const x = io({ REBASELINE_MANIFEST: f, TARGET_REPLAY_URL: broken.httpUrl });
    const code = await rebaselineMain([], x.io);
    expect(code, x.out.join('')).toBe(1);
    expect(x.out.join('')).toMatch(/deliveryRatePct +↑ +100 +\d+(\.\d+)? .* regress/);
  });

  it('a manifest that breaks the schema is refused with the test id and field', async () => {
    const f = join(dir, 'bad.json');
    writeFileSync(f, JSON.stringify({ version: 1, tests: [{ ...manifest.tests[0], id: 'no-seed', params: { clients: 5 } }] }));
    await expect(rebaselineMain([], io({ REBASELINE_MANIFEST: f }).io)).rejects.toMatchObject({ code: 'RR_ERR_MANIFEST_INVALID', message: expect.stringContaining('(no-seed).params: "seed" is required') });
    writeFileSync(f, JSON.stringify({ version: 1, tests: [{ ...manifest.tests[0], id: 'bad-param', params: { seed: 1, msgz: 3 } }] }));
    await expect(rebaselineMain([], io({ REBASELINE_MANIFEST: f }).io)).rejects.toMatchObject({ message: expect.stringContaining('unknown manifest bad-param option "msgz"') });
  });

  it('against BENCH_RUNNER_URL it judges the runner\'s result; against SHARDS the merge (perShardN as each shard\'s n)', async () => {
    const mk = () => startStandIn({ token: 'tok', result: shardResult({ clients: 20, msgs: 10, latenciesMs: [5, 6, 7] }) });
    const [a, b] = [await mk(), await mk()];
    stops.push(() => a.close(), () => b.close());
    const m: Manifest = {
      version: 1,
      tests: [{ id: 'fleet', category: 'jitter', runner: 'jitter', target: 'ws', perShardN: 20, params: { n: 5, msgs: 10, seed: 3 }, baseline: { clients: { value: 40, direction: 'higher', driftThresholdPct: 1 }, deliveryRatePct: { value: 100, direction: 'higher' } } }],
    };
    const f = join(dir, 'fleet-manifest.json');
    writeFileSync(f, JSON.stringify(m));
    const one = io({ REBASELINE_MANIFEST: f, BENCH_RUNNER_URL: a.url, BENCH_RUNNER_TOKEN: 'tok', POLL_MS: '50' });
    expect(await rebaselineMain([], one.io)).toBe(0);
    expect(one.out.join('')).toMatch(/^DRIFT {2}fleet {2}\(jitter on ws, runner http/m);
    expect(one.out.join('')).toMatch(/clients +↑ +40 +20 /);
    const fleet = io({ REBASELINE_MANIFEST: f, SHARDS: `${a.url},${b.url}`, BENCH_RUNNER_TOKEN: 'tok', POLL_MS: '50' });
    expect(await rebaselineMain([], fleet.io)).toBe(0);
    expect(fleet.out.join('')).toMatch(/^OK {2}fleet {2}\(jitter on ws, shards /m);
    expect(b.requests.find((q) => q.method === 'POST')!.path).toBe('/bench-jitter-ws?msgs=10&seed=3&n=20&async=1');
  });
});
