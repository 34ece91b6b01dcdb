import { describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseOptions } from '../../lib/options.ts';
import { shardResult } from '../merge/fixtures.ts';
import { COORD_OPTIONS } from './options.ts';
import { runMultiShard } from './run.ts';
import { deadUrl } from './stand-in.ts';
import { main } from './cli.ts';
import { standInShards } from './testing.ts';

const TOKEN = 'coord-test-token';
const { standIn, opts, open } = standInShards(TOKEN);
const lines: string[] = [];
const log = (l: string) => void lines.push(l);

describe('coordinator against stand-in runners', () => {
  it('fails a shard whose effective params differ from what was asked, and says which', async () => {
    const a = await standIn();
    const b = await standIn({ effectiveOverride: { clients: 5 } });
    const r = await runMultiShard(opts([a.url, b.url], { perShardN: 20 }), { msgs: '10', seed: '7' }, log);
    expect(r.perShard.map((s) => s.status)).toEqual(['done', 'param-mismatch']);
    expect(r.perShard[1]!.error).toBe('shard would run different parameters: n asked 20, effective 5');
    expect(r.exitCode).toBe(1);
    expect(r.exitReason).toContain('s2 (param-mismatch)');
    // The mismatching shard's clients are not in the merge.
    expect(r.merged).toMatchObject({ clients: 20, lostDeliveries: 0 });
    // Never polled: a shard that would run another test is not waited for.
    expect(b.requests.some((q) => q.path.startsWith('/jobs/job-1'))).toBe(false);
    // Every call but /health carried the bearer token; the request asked async with the params.
    const post = a.requests.find((q) => q.method === 'POST')!;
    expect(post.path).toBe('/bench-jitter-replay?msgs=10&seed=7&n=20&async=1');
    expect(a.requests.filter((q) => q.path !== '/health').every((q) => q.auth === `Bearer ${TOKEN}`)).toBe(true);
  });

  it('fails a shard that reports unknown params', async () => {
    const a = await standIn({ unknownParams: ['msgz'] });
    const r = await runMultiShard(opts([a.url]), {}, log);
    expect(r.perShard[0]).toMatchObject({ status: 'param-mismatch', error: 'shard ignored parameters it does not know: msgz' });
    expect(r.validity.flags.map((f) => f.code)).toContain('NO_SHARD_SUCCEEDED');
    expect(r.exitCode).toBe(2);
  });

  it('a shard that dies mid-run is reported and its clients are not counted as loss', async () => {
    const a = await standIn();
    const b = await standIn({ runningPolls: 1000 });
    const run = runMultiShard(opts([a.url, b.url], { timeoutSec: 2 }), {}, log);
    // Let b accept the job, then take it away.
    for (let i = 0; i < 100 && !b.requests.some((q) => q.path.startsWith('/jobs/job-1')); i++) await new Promise((res) => setTimeout(res, 20));
    await b.close();
    open.splice(open.indexOf(b), 1);
    const r = await run;
    expect(r.perShard[1]!.status).toBe('timeout');
    expect(r.perShard[1]!.error).toMatch(/no final status within 2 s \(last poll: ECONNREFUSED\)/);
    expect(r.merged).toMatchObject({ clients: 20, expectedDeliveries: 200, lostDeliveries: 0, deliveryRatePct: 100 });
    expect(r.validity.flags.find((f) => f.code === 'SHARD_FAILED')!.shards).toEqual(['s2']);
    expect(r.exitCode).toBe(1);
  });

  it('the health sweep stops the run on a dead shard or a wrong token, unless told to skip them', async () => {
    const a = await standIn();
    const dead = await deadUrl();
    await expect(runMultiShard(opts([a.url, dead]), {}, log)).rejects.toMatchObject({ code: 'RR_ERR_SHARD_UNHEALTHY', message: expect.stringContaining('s2') });
    expect(a.requests.some((q) => q.method === 'POST')).toBe(false);
    await expect(runMultiShard(parseOptions(COORD_OPTIONS, { values: { shards: a.url, token: 'wrong' } }), {}, log)).rejects.toMatchObject({
      message: expect.stringContaining('401: BENCH_RUNNER_TOKEN is missing or does not match'),
    });
    const r = await runMultiShard(opts([a.url, dead], { skipUnhealthy: true }), {}, log);
    expect(r.perShard.map((s) => s.status)).toEqual(['done', 'unreachable']);
    expect(r.merged.lostDeliveries).toBe(0);
    expect(r.exitCode).toBe(1);
  });

  it('own-stream mode gives each shard its own stream and whisper rooms', async () => {
    const a = await standIn();
    const b = await standIn();
    await runMultiShard(opts([a.url, b.url], { test: 'whispers' }), { stream: 'x', 'room-prefix': 'r' }, log);
    const q = [a, b].map((s) => new URL(s.requests.find((x) => x.method === 'POST')!.path, 'http://x').searchParams);
    expect(q.map((p) => [p.get('stream'), p.get('roomPrefix'), p.get('room-prefix')])).toEqual([['x-s1', 'r-s1', null], ['x-s2', 'r-s2', null]]);
  });

  it('streams each shard\'s progress prefixed with its name', async () => {
    lines.length = 0;
    const a = await standIn({ runningPolls: 2 });
    await runMultiShard(opts([a.url]), {}, log);
    expect(lines).toContain('[s1] job job-1 enqueued');
    expect(lines).toContain('[s1] poll 1');
    expect(lines).toContain('[s1] running {"phase":"publish","published":2}');
    expect(lines).toContain('[s1] finished');
    expect(lines).toContain('[s1] done');
  });
});

describe('--shared-stream: clock offsets', () => {
  it('measures each shard\'s offset, corrects its latencies, and sends one publisher', async () => {
    const truth = [10, 11, 12, 13, 14];
    const a = await standIn({ result: shardResult({ clients: 5, msgs: 5, latenciesMs: truth }) });
    // b's clock runs 5 s ahead of the coordinator's (and of a, the publisher): its raw latencies read 5 s long.
    const b = await standIn({ clockAheadMs: 5000, result: shardResult({ clients: 5, msgs: 5, latenciesMs: truth.map((v) => v + 5000) }) });
    const r = await runMultiShard(opts([a.url, b.url], { sharedStream: true, clockExchanges: 4 }), {}, log);
    const off = r.clock!.offsets;
    expect(off.map((x) => x.name)).toEqual(['s1', 's2']);
    expect(Math.abs(off[0]!.offsetMs)).toBeLessThanOrEqual(off[0]!.uncertaintyMs + 0.5);
    expect(Math.abs(off[1]!.offsetMs - 5000)).toBeLessThanOrEqual(off[1]!.uncertaintyMs + 0.5);
    const raw = r.merged.latencyRawMs as { min: number; max: number };
    expect(Math.abs(raw.min - 10)).toBeLessThanOrEqual(r.clock!.maxUncertaintyMs + 0.5);
    expect(Math.abs(raw.max - 14)).toBeLessThanOrEqual(r.clock!.maxUncertaintyMs + 0.5);
    const posts = [a, b].map((s) => new URL(s.requests.find((q) => q.method === 'POST')!.path, 'http://x').searchParams);
    expect(posts[0]!.get('stream')).toBe(posts[1]!.get('stream'));
    expect(posts[0]!.get('runId')).toBe(posts[1]!.get('runId'));
    expect(posts[0]!.get('subscribeOnly')).toBeNull();
    expect(posts[1]!.get('subscribeOnly')).toBe('1');
    // The barrier: the publisher is asked only after the subscriber's job was enqueued.
    expect(a.requests.find((q) => q.method === 'POST')!.at).toBeGreaterThanOrEqual(b.requests.find((q) => q.method === 'POST')!.at);
    expect(r.mode).toBe('shared-stream');
    expect(r.exitReason).toBe('ok');
    expect(r.exitCode).toBe(0);
  });

  it('a shard without a /time route makes the shared-stream run invalid', async () => {
    const a = await standIn();
    const b = await standIn({ noTime: true });
    const r = await runMultiShard(opts([a.url, b.url], { sharedStream: true, clockExchanges: 1 }), {}, log);
    expect(r.exitCode).toBe(2);
    expect(r.validity.flags.find((f) => f.code === 'CLOCK_UNCERTAINTY_EXCEEDS_LATENCY')!.shards).toEqual(['s2']);
  });
});

describe('CLI', () => {
  it('--json prints only the merged result, also written to results/', async () => {
    const a = await standIn();
    const dir = mkdtempSync(join(tmpdir(), 'rr-coord-'));
    process.env.RESULTS_DIR = dir;
    let out = '';
    const write = process.stdout.write.bind(process.stdout);
    const err = process.stderr.write.bind(process.stderr);
    process.stdout.write = ((s: string) => ((out += s), true)) as typeof process.stdout.write;
    process.stderr.write = (() => true) as typeof process.stderr.write;
    let code: number;
    try {
      code = await main(['--test', 'jitter', '--target', 'replay', '--json', '--poll-ms', '50', '--msgs', '10'], { SHARDS: a.url, BENCH_RUNNER_TOKEN: TOKEN });
    } finally {
      process.stdout.write = write;
      process.stderr.write = err;
      delete process.env.RESULTS_DIR;
    }
    expect(code).toBe(0);
    const report = JSON.parse(out);
    expect(report).toMatchObject({ testType: 'jitter', target: 'replay', shards: 1, params: { msgs: '10' }, exitCode: 0 });
    const file = readdirSync(dir).find((f) => f.endsWith('.json'))!;
    expect(file).toMatch(/^jitter-multi-replay-1shards-/);
    expect(JSON.parse(readFileSync(join(dir, file), 'utf8')).merged).toEqual(report.merged);
  });

  it('rejects a bad test param before asking any shard', async () => {
    const a = await standIn();
    await expect(main(['--test', 'jitter', '--msgs', 'many'], { SHARDS: a.url, BENCH_RUNNER_TOKEN: TOKEN })).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID' });
    await expect(main(['--test', 'jitter', '--msgz', '3'], { SHARDS: a.url, BENCH_RUNNER_TOKEN: TOKEN })).rejects.toMatchObject({ code: 'RR_ERR_OPTION_UNKNOWN' });
    await expect(main(['--test', 'jitter'], {})).rejects.toMatchObject({ code: 'RR_ERR_SHARDS_MISSING' });
    expect(a.requests).toEqual([]);
  });
});
