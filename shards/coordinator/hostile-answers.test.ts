import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { shardResult, widestHistogram } from '../merge/fixtures.ts';
import { runMultiShard } from './run.ts';
import { standInShards } from './testing.ts';

/**
 * Shards that attack the coordinator itself rather than the merge's figures: an answer that
 * never ends or is huge, a redirect to a host outside SHARDS, a job that runs on past the plan
 * it announced, a histogram built to keep the decoder looping. Each one next to a healthy shard:
 * the healthy one is merged, the hostile one excluded with its reason, well within the deadline.
 */
const TOKEN = 'hostile-answers-token';
const { standIn, opts } = standInShards(TOKEN);
const asked = { msgs: '10', seed: '7' };
const CAP = 65_536;

/** ZigZag LEB128 as HdrHistogram's V2 payload writes it. */
function zigzag(v: number): number[] {
  let e = v >= 0 ? v * 2 : -v * 2 - 1;
  const out: number[] = [];
  for (let k = 0; k < 8; k++) {
    if (e < 128) return [...out, e];
    out.push(128 | e % 128);
    e = Math.floor(e / 128);
  }
  return [...out, e];
}

/** A well-formed compressed V2 histogram (the runners' layout: 1 µs .. 1 h, 3 digits) whose payload is a zero run of `zeroRun` buckets and then one sample. */
function hostileHistogram(zeroRun: number): string {
  const payload = Buffer.from([...zigzag(-zeroRun), ...zigzag(1)]);
  const header = Buffer.alloc(40);
  header.writeUInt32BE(0x1c849313, 0);
  header.writeUInt32BE(payload.length, 4);
  header.writeUInt32BE(1, 8);
  header.writeUInt32BE(3, 12);
  header.writeBigUInt64BE(1n, 16);
  header.writeBigUInt64BE(3_600_000_000n, 24);
  header.writeBigUInt64BE(1n, 32);
  const deflated = deflateSync(Buffer.concat([header, payload]));
  const envelope = Buffer.alloc(8);
  envelope.writeUInt32BE(0x1c849314, 0);
  envelope.writeUInt32BE(deflated.length, 4);
  return Buffer.concat([envelope, deflated]).toString('base64');
}

describe('a hostile shard cannot hang, bloat or redirect the coordinator', () => {
  it('a histogram claiming a zero run of 10^12 buckets: refused before decoding, the CLI writes the healthy shard\'s merge', async () => {
    const a = await standIn();
    const good = shardResult({ clients: 20, msgs: 10, latenciesMs: [5, 6, 7] });
    const b = await standIn({ result: { ...good, latencyHistogram: { ...good.latencyHistogram!, histogram: hostileHistogram(1e12), count: 1 } } });
    const dir = mkdtempSync(join(tmpdir(), 'rr-hostile-hist-'));
    // A child process: a decoder stuck in a synchronous loop would block this test's own timers,
    // so the deadline has to be a kill from outside (before the fix it fires and the test fails).
    const child = await new Promise<{ code: number | null; killed: boolean; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'shards/coordinator/main.ts', '--test', 'jitter', '--target', 'replay', '--poll-ms', '50', '--msgs', '10', '--seed', '7'], {
        env: { ...process.env, SHARDS: `${a.url},${b.url}`, BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: dir, SHARD_TIMEOUT_SEC: '20', PER_SHARD_N: '20' },
        timeout: 60_000,
        killSignal: 'SIGKILL',
      }, (err, _out, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, killed: Boolean(err?.killed), stderr }));
    });
    expect(child.killed, child.stderr.slice(-2000)).toBe(false);
    expect(child.code).toBe(1);
    const file = readdirSync(dir).find((f) => f.endsWith('.json'));
    expect(file, child.stderr.slice(-2000)).toBeDefined();
    const written = JSON.parse(readFileSync(join(dir, file!), 'utf8'));
    expect(written.merged).toMatchObject({ clients: 20, receivedDeliveries: 200, lostDeliveries: 0 });
    expect(written.perShard[0]).toMatchObject({ name: 's1', status: 'done' });
    expect(written.perShard[1]).toMatchObject({ name: 's2', status: 'invalid' });
    expect(written.perShard[1].error).toMatch(/^SHARD_RESULT_INVALID: latencyHistogram does not decode: payload runs to bucket 1000000000000, its declared range has 23552/);
  }, 90_000);

  it('a valid histogram that decodes past SHARD_HISTOGRAM_DEADLINE_MS: the decoder is stopped, the CLI writes the healthy shard\'s merge', async () => {
    // The healthy shard carries no histogram, so nothing of it meets the 1 ms deadline.
    const { latencyHistogram: _h, ...healthy } = shardResult({ clients: 20, msgs: 10 });
    const a = await standIn({ result: healthy });
    const b = await standIn({ result: { ...shardResult({ clients: 1000, msgs: 1000 }), latencyHistogram: widestHistogram() } });
    const dir = mkdtempSync(join(tmpdir(), 'rr-slow-hist-'));
    const child = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', 'shards/coordinator/main.ts', '--test', 'jitter', '--target', 'replay', '--poll-ms', '50', '--msgs', '10', '--seed', '7'], {
        env: { ...process.env, SHARDS: `${a.url},${b.url}`, BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: dir, SHARD_TIMEOUT_SEC: '20', SHARD_HISTOGRAM_DEADLINE_MS: '1' },
        timeout: 60_000,
        killSignal: 'SIGKILL',
      }, (err, _out, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stderr }));
    });
    expect(child.code, child.stderr.slice(-2000)).toBe(1);
    const file = readdirSync(dir).find((f) => f.endsWith('.json'));
    expect(file, child.stderr.slice(-2000)).toBeDefined();
    const written = JSON.parse(readFileSync(join(dir, file!), 'utf8'));
    expect(written.merged).toMatchObject({ clients: 20, receivedDeliveries: 200, lostDeliveries: 0 });
    expect(written.merged.latencyHistogram).toBeUndefined();
    expect(written.perShard[0]).toMatchObject({ name: 's1', status: 'done' });
    expect(written.perShard[1]).toMatchObject({ name: 's2', status: 'invalid', error: 'SHARD_RESULT_INVALID: latencyHistogram did not decode within its 1 ms deadline (decoder stopped)' });
  }, 90_000);

  it('an answer over the byte cap is excluded, read no further: a padded result and a body that never ends', async () => {
    const a = await standIn();
    const padded = await standIn({ result: { ...shardResult({ clients: 20, msgs: 10, latenciesMs: [5, 6, 7] }), padding: 'x'.repeat(4 * CAP) } });
    const endless = await standIn({
      answer: (path, res) => {
        if (path !== '/jobs/job-1') return false;
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(16_384, 0x20);
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        res.write('{"status":"running","pad":"');
        pump();
        return true;
      },
    });
    const t0 = Date.now();
    const r = await runMultiShard(opts([a.url, padded.url, endless.url], { maxResponseBytes: CAP, timeoutSec: 30 }), asked, () => {});
    expect(r.perShard.map((s) => s.status)).toEqual(['done', 'rejected', 'rejected']);
    for (const s of r.perShard.slice(1)) expect(s.error).toMatch(/^GET \/jobs\/job-1 answered more than 65536 bytes \(SHARD_MAX_RESPONSE_BYTES/);
    // Excluded on its first answer, not at the 30 s deadline.
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(r.merged).toMatchObject({ clients: 20, receivedDeliveries: 200, lostDeliveries: 0 });
    expect(r.exitReason).toBe('failed shards: s2 (rejected), s3 (rejected)');
  }, 40_000);

  it('a 3xx is never followed: the shard is excluded naming the Location, the outside host\'s job is not merged', async () => {
    const a = await standIn();
    // A host outside SHARDS that would hand out a flawless result to anyone.
    const outside = await standIn({
      answer: (path, res) => {
        if (!path.startsWith('/jobs/')) return false;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ status: 'done', result: { ...shardResult({ clients: 20, msgs: 10, latenciesMs: [5, 6, 7] }), params: { ...asked, n: '20' } } }));
        return true;
      },
    });
    const redirect = (from: string) => (path: string, res: import('node:http').ServerResponse) => {
      if (!path.startsWith(from)) return false;
      res.writeHead(302, { location: `${outside.url}/jobs/job-1\x9b2J` });
      res.end();
      return true;
    };
    const onPoll = await standIn({ answer: redirect('/jobs/job-1') });
    const onPost = await standIn({ answer: redirect('/bench-') });
    const r = await runMultiShard(opts([a.url, onPoll.url, onPost.url], { perShardN: 20 }), asked, () => {});
    expect(r.perShard.map((s) => s.status)).toEqual(['done', 'rejected', 'rejected']);
    // Quoted, and the C1 control (CSI) escaped as text.
    const location = `"${outside.url}/jobs/job-1\\x9b2J"`;
    expect(r.perShard[1]!.error).toBe(`GET /jobs/job-1 answered 302 redirecting to ${location}: the coordinator follows no redirects (only the SHARDS URLs are trusted)`);
    expect(r.perShard[2]!.error).toMatch(/^POST \/bench-jitter-replay answered 302 redirecting to /);
    expect(r.perShard[1]!.error).not.toMatch(/\x9b/);
    expect(outside.requests.filter((q) => q.path.startsWith('/jobs/job-1'))).toEqual([]);
    expect(r.merged).toMatchObject({ clients: 20, receivedDeliveries: 200 });
  });

  it('a job still running past its own announced plan + max(grace, 25%) is excluded then, not at SHARD_TIMEOUT_SEC', async () => {
    const a = await standIn();
    const stuck = await standIn({ runningPolls: Number.MAX_SAFE_INTEGER, plannedMs: 2000 });
    const t0 = Date.now();
    // plan 2 s, margin max(1 s, 25% = 0.5 s) = 1 s: excluded about 3 s after it was accepted, not at 60 s.
    const r = await runMultiShard(opts([a.url, stuck.url], { timeoutSec: 60, planGraceSec: 1 }), asked, () => {});
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(r.perShard.map((s) => s.status)).toEqual(['done', 'timeout']);
    expect(r.perShard[1]!.error).toMatch(/^overran its own plan: announced plannedMs 2000, no final status 3 s after it was accepted \(plan \+ max\(--plan-grace-sec, 25%\) = 3 s\)/);
    expect(r.merged).toMatchObject({ clients: 20, receivedDeliveries: 200 });
  }, 30_000);

  it('a shard that announces no plan is held to SHARD_TIMEOUT_SEC only; one that finishes inside its plan is merged', async () => {
    const silent = await standIn({ runningPolls: Number.MAX_SAFE_INTEGER });
    const onPlan = await standIn({ runningPolls: 3, plannedMs: 5000 });
    const r = await runMultiShard(opts([onPlan.url, silent.url], { timeoutSec: 2, planGraceSec: 0 }), asked, () => {});
    expect(r.perShard.map((s) => s.status)).toEqual(['done', 'timeout']);
    expect(r.perShard[1]!.error).toMatch(/^no final status within 2 s/);
  });
});
