import { brokerOptions } from '../index.ts';
import type { ReplayServerOptions } from '../options.ts';
import { RedisBroker } from './redis.ts';

/**
 * The broker `--broker` names, connected: a RedisBroker for `redis` (rejects with
 * RR_ERR_REDIS_UNAVAILABLE when Redis cannot be reached, so the process exits non-zero), or
 * undefined for `memory` (createReplayServer then builds its own MemoryBroker).
 */
export async function openBroker(opts: ReplayServerOptions): Promise<RedisBroker | undefined> {
  if (opts.broker !== 'redis') return undefined;
  const broker = new RedisBroker({ ...brokerOptions(opts), url: opts.redisUrl, prefix: opts.redisPrefix, feedMaxLen: opts.redisFeedMaxLen, commandTimeoutMs: opts.redisCommandTimeoutMs, probeIntervalMs: opts.redisProbeIntervalMs });
  await broker.connect();
  return broker;
}
