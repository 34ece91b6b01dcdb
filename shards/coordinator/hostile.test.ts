import { describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shardResult } from '../merge/fixtures.ts';
import { runMultiShard } from './run.ts';
import { type StandInOptions } from './stand-in.ts';
import { main } from './cli.ts';
import { standInShards } from './testing.ts';

/**
 * Shards that lie, by accident or not: each answers the runner API (node:http, stand-in.ts) with a
 * crafted body. The crafted shard must be excluded with its reason, the healthy one merged, and
 * the run reported incomplete, never crashed and never blamed on the target.
 */
const TOKEN = 'hostile-token';
const { standIn, opts, open } = standInShards(TOKEN);
const good = () => shardResult({ clients: 20, msgs: 10, latenciesMs: [5, 6, 7] });
const asked = { msgs: '10', seed: '7', n: '20' };

const crafted: [string, Partial<StandInOptions>, RegExp][] = [
  [
    'a result that ran 5x the messages with settle=0 (its enqueue echo said otherwise)',
    { result: { ...shardResult({ clients: 20, msgs: 50, received: 700 }), params: { clients: 20, msgs: 50, seed: 7, settle: 0 } } },
    /result ran different parameters: msgs asked 10, ran 50/,
  ],
  ['no validity block', { result: (({ validity: _v, ...r }) => r)(good()) }, /validity block missing/],
  ['validity: {}', { result: { ...good(), validity: {} } }, /validity.valid is undefined, not a boolean/],
  ['a histogram that is not base64', { result: { ...good(), latencyHistogram: { histogram: '!!!not base64', count: 3, minUs: 1, maxUs: 2, negatives: 0 } } }, /latencyHistogram does not decode/],
  ['a histogram whose count lies', { result: { ...good(), latencyHistogram: { ...good().latencyHistogram!, count: 9 } } }, /holds 3 samples, its count says 9/],
  ['string counters', { result: { ...good(), receivedDeliveries: '400' } }, /receivedDeliveries is "400", not an integer >= 0/],
  ['negative counters', { result: { ...good(), lostDeliveries: -150 } }, /lostDeliveries is -150, not an integer >= 0/],
  ['received beyond clients x messages', { result: { ...good(), receivedDeliveries: 700 } }, /receivedDeliveries 700 exceeds clients x messages 200/],
  ['unconfirmed deliveries beyond the unaccepted ones (would hide an over-100% rate)', { result: { ...good(), receivedDeliveries: 200, unacceptedDeliveries: 0, unconfirmedDeliveries: 150 } }, /unconfirmedDeliveries 150 exceeds unacceptedDeliveries 0/],
  ['unaccepted deliveries beyond received', { result: { ...good(), unacceptedDeliveries: 900 } }, /unacceptedDeliveries 900 exceeds receivedDeliveries/],
  ['a result that is a string', { result: 'all good' }, /result is string, not an object/],
  ['a result without params', { result: good(), keepParams: true }, /params missing/],
  ['failure causes that are not counts', { result: { ...good(), connectFailureCauses: { target: 'many' } } }, /connectFailureCauses.target is "many"/],
];

describe('a shard result that fails the schema', () => {
  it.each(crafted)('%s: excluded with its reason, the healthy shard merged, exit 1', async (_name, bad, reason) => {
    const a = await standIn();
    const b = await standIn(bad);
    const r = await runMultiShard(opts([a.url, b.url], { perShardN: 20 }), { msgs: '10', seed: '7' }, () => {});
    expect(r.perShard.map((s) => s.status)).toEqual(['done', 'invalid']);
    expect(r.perShard[1]!.error).toMatch(/^SHARD_RESULT_INVALID: /);
    expect(r.perShard[1]!.error).toMatch(reason);
    const f = r.validity.flags.find((x) => x.code === 'SHARD_RESULT_INVALID')!;
    expect(f.shards).toEqual(['s2']);
    expect(f.message).toMatch(reason);
    // Only the healthy shard's figures: the crafted shard is neither expected nor lost.
    expect(r.merged).toMatchObject({ clients: 20, expectedDeliveries: 200, receivedDeliveries: 200, lostDeliveries: 0, deliveryRatePct: 100 });
    expect(r.exitCode).toBe(1);
    expect(r.exitReason).toBe('failed shards: s2 (invalid)');
  });

  it('job records that are not objects, or done without a result, fail that shard only', async () => {
    for (const jobBody of [null, [1, 2], 'done', { status: 'done', result: null }, { status: 'done', logTail: 'not a list', result: { validity: { valid: true, flags: [] }, clients: 'x' } }]) {
      const a = await standIn();
      const b = await standIn({ jobBody, runningPolls: 0 });
      const r = await runMultiShard(opts([a.url, b.url], { timeoutSec: 1 }), asked, () => {});
      expect(r.perShard[0]!.status, JSON.stringify(jobBody)).toBe('done');
      expect(['failed', 'invalid', 'timeout'], JSON.stringify(jobBody)).toContain(r.perShard[1]!.status);
      expect(r.merged.lostDeliveries).toBe(0);
      expect(r.exitCode).toBe(1);
      await Promise.all(open.splice(0).map((s) => s.close()));
    }
  });

  it('reads the benchmark\'s job record (error a string, code in errorCode, aborted:true) as well as the older one', async () => {
    const cases: [unknown, string, string][] = [
      [{ status: 'failed', error: 'target refused', errorCode: 'RR_ERR_RUN_FAILED' }, 'failed', 'RR_ERR_RUN_FAILED: target refused'],
      [{ status: 'failed', aborted: true, error: 'runner shutting down' }, 'aborted', 'runner shutting down'],
      [{ status: 'failed', error: { code: 'RR_ERR_RUN_FAILED', message: 'boom' } }, 'failed', 'RR_ERR_RUN_FAILED: boom'],
      [{ status: 'aborted', error: { code: 'RR_ERR_RUN_FAILED', message: 'shutdown' } }, 'aborted', 'RR_ERR_RUN_FAILED: shutdown'],
    ];
    for (const [jobBody, status, error] of cases) {
      const a = await standIn({ jobBody });
      const r = await runMultiShard(opts([a.url]), asked, () => {});
      expect(r.perShard[0], JSON.stringify(jobBody)).toMatchObject({ status, error });
      await Promise.all(open.splice(0).map((s) => s.close()));
    }
  });

  it('the CLI writes the merged JSON of the healthy shard and exits 1 when another shard lied', async () => {
    const a = await standIn();
    const b = await standIn({ result: { ...good(), validity: {} } });
    const dir = mkdtempSync(join(tmpdir(), 'rr-hostile-'));
    process.env.RESULTS_DIR = dir;
    const err = process.stderr.write.bind(process.stderr);
    const out = process.stdout.write.bind(process.stdout);
    process.stderr.write = (() => true) as typeof process.stderr.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    let code: number;
    try {
      code = await main(['--test', 'jitter', '--target', 'replay', '--poll-ms', '50', '--msgs', '10'], { SHARDS: `${a.url},${b.url}`, BENCH_RUNNER_TOKEN: TOKEN });
    } finally {
      process.stderr.write = err;
      process.stdout.write = out;
      delete process.env.RESULTS_DIR;
    }
    expect(code).toBe(1);
    const file = readdirSync(dir).find((f) => f.endsWith('.json'))!;
    const written = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    expect(written.merged).toMatchObject({ clients: 20, receivedDeliveries: 200 });
    expect(written.perShard[1]).toMatchObject({ name: 's2', status: 'invalid' });
  });
});

describe('shard text is data', () => {
  it('log lines, errors and flag messages reach the terminal with control characters escaped', async () => {
    const a = await standIn({ logTail: ['\x1b[2J\x1b[Hcleared', 'fine\n[s2] done: all good', 'bidi \u202e txt'] });
    const b = await standIn({ jobBody: { status: 'failed', error: 'bad\r\n[s1] done\x07', errorCode: 'RR_ERR_RUN_FAILED' } });
    const lines: string[] = [];
    const r = await runMultiShard(opts([a.url, b.url]), asked, (l) => lines.push(l));
    expect(lines.join('\n')).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f\u202e]/);
    expect(lines).toContain('[s1] \\x1b[2J\\x1b[Hcleared');
    expect(lines).toContain('[s1] fine\\n[s2] done: all good');
    expect(lines).toContain('[s1] bidi \\u{202e} txt');
    expect(lines.some((l) => l.startsWith('[s2] done'))).toBe(false);
    expect(lines).toContain('[s2] failed: RR_ERR_RUN_FAILED: bad\\r\\n[s1] done\\x07');
    const { formatReport } = await import('./summary.ts');
    const table = formatReport(r);
    expect(table).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f]/);
    expect(table).toContain('bad\\r\\n[s1] done\\x07');
  });
});
