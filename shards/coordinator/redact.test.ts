import { describe, expect, it } from 'vitest';
import { shardResult } from '../merge/fixtures.ts';
import { runMultiShard } from './run.ts';
import { standInShards } from './testing.ts';

/** URL credentials (a shard's, or a target's a shard echoes) never reach the coordinator's output or its terminal. */
const TOKEN = 'redact-coordinator-token';
const SECRET = 'pw-s3cret';
const { standIn, opts } = standInShards(TOKEN);

describe('coordinator: URL credentials', () => {
  it('are redacted in the merged report (shard URLs, shard results) and in the lines it prints', async () => {
    const a = await standIn({
      result: { ...shardResult({ clients: 20, msgs: 10, latenciesMs: [5, 6, 7] }), params: { clients: 20, msgs: 10, url: `http://user:${SECRET}@target:8080` } },
      logTail: [`connecting to ws://user:${SECRET}@target:8080/ws`],
    });
    const credentialed = a.url.replace('http://', `http://user:${SECRET}@`);
    const lines: string[] = [];
    const r = await runMultiShard(opts([a.url, credentialed], { skipUnhealthy: true }), { msgs: '10', n: '20' }, (l) => lines.push(l));
    expect(r.perShard.map((s) => s.status)).toEqual(['done', 'unreachable']);
    expect(r.meta.shardUrls[1]).toBe(a.url.replace('http://', 'http://***@'));
    expect(lines).toContain('[s1] connecting to ws://***@target:8080/ws');
    expect(JSON.stringify(r)).not.toContain(SECRET);
    expect(lines.join('\n')).not.toContain(SECRET);
  });
});
