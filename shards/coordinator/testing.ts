import { afterEach } from 'vitest';
import { parseOptions } from '../../lib/options.ts';
import { shardResult } from '../merge/fixtures.ts';
import { COORD_OPTIONS } from './options.ts';
import { startStandIn, type StandIn, type StandInOptions } from './stand-in.ts';

/**
 * Stand-in shards for one test file, all closed after each test, (`open`, for a test that closes one itself) and coordinator options aimed at
 * them with a short poll. Call once at the file's top level: it registers the afterEach.
 */
export function standInShards(token: string) {
  const open: StandIn[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  const standIn = async (o: Partial<StandInOptions> = {}) => {
    const s = await startStandIn({ token, result: shardResult({ clients: 20, msgs: 10, latenciesMs: [5, 6, 7] }), ...o });
    open.push(s);
    return s;
  };
  const opts = (shards: string[], extra: Record<string, unknown> = {}) =>
    parseOptions(COORD_OPTIONS, { values: { shards: shards.join(','), token, target: 'replay', pollMs: 50, timeoutSec: 5, ...extra } });
  return { standIn, opts, open };
}
