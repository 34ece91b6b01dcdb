import { ReboundError } from '../../lib/errors.ts';
import { parseOptions, type OptionTable, type OptionValues } from '../../lib/options.ts';
import { LEDGER_MAX_CELLS } from '../../engine/measure/ledger.ts';
import { checkTargetUrl, getTarget } from '../../engine/targets/index.ts';

/**
 * Throughput (the benchmark's fan-out test): `total` messages every `intervalMs` to `n` clients
 * through a publisher pool; deliveries per second. Defaults are the benchmark's (n 10000,
 * total 100, intervalMs 100, ramp 200, drain 30 s, publisher pool x16).
 */
export const THROUGHPUT_OPTIONS = {
  target: { type: 'string', default: 'replay', env: ['TARGET'], doc: 'target name' },
  url: { type: 'optional-string', default: undefined, env: ['TARGET_URL'], doc: 'base URL of an already running target (CLI only); default: start it locally' },
  broadcastUrl: { type: 'optional-string', default: undefined, env: ['BROADCAST_URL'], doc: 'where to POST broadcasts (CLI only); default <url>/_broadcast' },
  broadcastKey: { type: 'string', default: '', env: ['BROADCAST_KEY', 'ANYCABLE_BROADCAST_SECRET'], doc: 'bearer key for /_broadcast' },
  clients: { type: 'int', default: 10_000, min: 1, max: 18_000, env: ['NUM_CLIENTS', 'N'], aliases: ['n'], doc: 'subscribers' },
  total: { type: 'int', default: 100, min: 1, max: 1_000_000, env: ['TOTAL', 'TOTAL_MESSAGES'], aliases: ['msgs'], doc: 'messages to publish' },
  intervalMs: { type: 'int', default: 100, min: 0, max: 60_000, env: ['INTERVAL_MS'], aliases: ['interval'], doc: 'ms between published messages (0 = as fast as the pool allows)' },
  ramp: { type: 'int', default: 200, min: 1, max: 100_000, env: ['RAMP_RATE'], doc: 'connects per second' },
  drain: { type: 'number', default: 30, min: 0, max: 3600, env: ['DRAIN_SEC'], doc: 'seconds to wait for deliveries after the last publish (ends early once complete)' },
  publisher: { type: 'enum', values: ['pool', 'serial'], default: 'pool', env: ['PUBLISHER'], doc: 'pool: concurrent requests on a schedule (order not guaranteed); serial: one connection, in order' },
  publisherConcurrency: { type: 'int', default: 16, min: 1, max: 1024, env: ['PUBLISHER_CONCURRENCY'], doc: 'connections in the publisher pool' },
  payloadBytes: { type: 'int', default: 0, min: 0, max: 65_536, env: ['PAYLOAD_BYTES'], doc: 'padding added to each message' },
  stream: { type: 'string', default: '', maxLength: 256, env: ['STREAM'], doc: 'stream name; default tp-<runId>' },
} as const satisfies OptionTable;

export type ThroughputOptions = OptionValues<typeof THROUGHPUT_OPTIONS>;

export function parseThroughputOptions(src: Parameters<typeof parseOptions>[1]): ThroughputOptions {
  return checkThroughputOptions(parseOptions(THROUGHPUT_OPTIONS, src));
}

/** The rules only the combination can break, over values already parsed. */
export function checkThroughputOptions(o: ThroughputOptions): ThroughputOptions {
  getTarget(o.target);
  if (o.clients * o.total > LEDGER_MAX_CELLS) throw new ReboundError('RR_ERR_OPTION_INVALID', `clients x total = ${o.clients * o.total} exceeds ${LEDGER_MAX_CELLS} ledger cells; split the clients over shards`, { details: { option: 'clients' } });
  for (const k of ['url', 'broadcastUrl'] as const) checkTargetUrl(k, o[k]);
  return o;
}
