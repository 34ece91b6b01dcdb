import { defaultsOf, parseOptions, type OptionTable, type OptionValues } from '../../lib/options.ts';
import { checkJitterOptions, JITTER_OPTIONS, type JitterOptions } from '../jitter/options.ts';

/**
 * Latency: publish at a fixed rate to clients that are never disrupted, and report the
 * distribution. The benchmark runs it as its jitter test with `jitter=999999`; here it is its own
 * test with its own table (no chaos options at all), executed by the same engine, ledger and
 * latency recorder as jitter with drops off.
 */
const J = JITTER_OPTIONS;
export const LATENCY_OPTIONS = {
  target: J.target,
  url: J.url,
  broadcastUrl: J.broadcastUrl,
  broadcastKey: J.broadcastKey,
  clients: { ...J.clients, default: 1000 },
  msgs: J.msgs,
  interval: J.interval,
  payloadBytes: J.payloadBytes,
  ramp: J.ramp,
  settle: { ...J.settle, default: 5000 },
  seed: J.seed,
  stream: J.stream,
  reconnectStrategy: J.reconnectStrategy,
  reconnectBaseMs: J.reconnectBaseMs,
  subscribeOnly: J.subscribeOnly,
  runId: J.runId,
} as const satisfies OptionTable;

export type LatencyOptions = OptionValues<typeof LATENCY_OPTIONS>;

export function parseLatencyOptions(src: Parameters<typeof parseOptions>[1]): LatencyOptions {
  return parseOptions(LATENCY_OPTIONS, src);
}

/** The jitter engine's options for a run with no disruption at all. */
export function toJitterOptions(o: LatencyOptions): JitterOptions {
  // Typed values already: the jitter engine's defaults fill what latency has no option for, no re-parse.
  return checkJitterOptions({ ...defaultsOf(JITTER_OPTIONS), ...o, jitter: 0, plan: 'drop', groups: 1, chaosMs: 0 });
}
