import { describe, expect, it } from 'vitest';
import { openFileLimit } from '../../engine/measure/runner-limits.ts';
import { parseTargetEntry } from './compare.ts';
import { frontFdNeed, parseAvalancheOptions } from './options.ts';

/** --front, --restart-nodes and the compare's name:K entries: every mismatch is a clear 400 before a socket opens. */
const parse = (values: Record<string, string | boolean>) => parseAvalancheOptions({ values, origin: 'test' });

describe('avalanche --front / --restart-nodes / name:K validation', () => {
  it.each([
    [{ target: 'replay-redis', nodes: '2', restartNodes: '3' }, /--restart-nodes 3 is more than the 2 node/],
    [{ target: 'replay-redis', nodes: '2', restart: 'rolling', restartNodes: '1' }, /--restart-nodes applies to --restart kill and term/],
    [{ target: 'replay', url: 'http://127.0.0.1:9', restart: 'hook', front: true }, /--front balances the nodes the runner starts/],
    [{ target: 'replay-redis', nodes: '2', restart: 'rolling', front: true }, /--front with --restart rolling is not supported/],
    [{ target: 'replay', nodes: '2', front: true }, /needs a target with a shared broker.*"replay" nodes share no state/],
    [{ target: 'ws', nodes: '3', front: true }, /needs a target with a shared broker/],
  ])('%j is refused', (values, msg) => {
    expect(() => parse(values)).toThrow(msg);
    try {
      parse(values);
    } catch (err) {
      expect((err as { code: string }).code).toBe('RR_ERR_OPTION_INVALID');
    }
  });

  it('accepts the goal shape and one node of a memory target behind a front', () => {
    expect(parse({ target: 'replay-redis', nodes: '2', restartNodes: '1', front: true })).toMatchObject({ nodes: 2, restartNodes: 1, front: true });
    expect(parse({ target: 'replay', front: true, restartNodes: '1' })).toMatchObject({ nodes: 1, front: true });
  });

  // Only where the open-file limit can be exceeded with --clients <= 18000 (this machine: 20000).
  it.skipIf((openFileLimit() ?? Infinity) > frontFdNeed(18_000) - 1)('refuses a front whose descriptors would not fit in the runner', () => {
    const limit = openFileLimit()!;
    const clients = Math.floor((limit - 256) / 3) + 1;
    expect(frontFdNeed(clients)).toBeGreaterThan(limit);
    expect(frontFdNeed(clients - 1)).toBeLessThanOrEqual(limit);
    expect(() => parse({ target: 'replay-redis', nodes: '2', clients: String(clients), rate: '0.1', warmupMs: '500', publishAfterMs: '0', front: true })).toThrow(/--front holds 3 descriptors per client/);
    expect(() => parse({ target: 'replay-redis', nodes: '2', clients: String(clients - 1), rate: '0.1', warmupMs: '500', publishAfterMs: '0', front: true })).not.toThrow();
  });

  it('parses compare entries name and name:K', () => {
    expect(parseTargetEntry('replay-redis:2')).toMatchObject({ nodes: 2, target: { name: 'replay-redis' } });
    expect(parseTargetEntry(' replay ')).toMatchObject({ nodes: 1, target: { name: 'replay' } });
    expect(() => parseTargetEntry('replay:0')).toThrow(/K must be 1 to 16/);
    expect(() => parseTargetEntry('replay:x')).toThrow(/not name or name:K/);
    expect(() => parseTargetEntry('nope:2')).toThrow(/nope/);
  });
});
