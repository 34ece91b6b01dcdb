import { defaultsOf, parseOptions, type OptionTable, type OptionValues } from '../../lib/options.ts';
import { DEFAULT_REPLAY_SERVER_OPTIONS } from '../replay-server/options.ts';
import { BROADCAST_LIMITS } from './broadcast.ts';

/**
 * Bounds of the reference servers (ws, Socket.IO), taken from the replay server's defaults so a
 * comparison runs every target under the same limits, and so the rig cannot be blown up by its
 * own targets (a paused client, thousands of topics, huge topic names).
 */
export const REFERENCE_LIMIT_OPTIONS = {
  maxBufferedBytes: {
    type: 'int',
    default: DEFAULT_REPLAY_SERVER_OPTIONS.maxBufferedBytes,
    min: 1024,
    max: 1_073_741_824,
    doc: 'outbound bytes queued per socket; over it for --slow-consumer-ms without draining (or over 16x at once) the socket is dropped as too slow (TCP closed)',
  },
  slowConsumerMs: { type: 'int', default: 2000, min: 0, max: 600_000, doc: 'how long a socket may stay over --max-buffered-bytes without draining before it is dropped' },
  maxPayloadBytes: { type: 'int', default: DEFAULT_REPLAY_SERVER_OPTIONS.maxPayloadBytes, min: 256, max: 16_777_216, doc: 'largest accepted client frame / packet' },
  maxSubscriptions: { type: 'int', default: DEFAULT_REPLAY_SERVER_OPTIONS.maxSubscriptions, min: 1, max: 100_000, doc: 'topics (rooms) per socket; more are refused' },
  maxStreamLength: { type: 'int', default: BROADCAST_LIMITS.maxStreamLength, min: 1, max: 65_536, doc: 'longest topic (room) name a client may subscribe to' },
  stopGraceMs: { type: 'int', default: DEFAULT_REPLAY_SERVER_OPTIONS.stopGraceMs, min: 0, max: 30_000, doc: 'on stop, time between the goodbye and terminating sockets that did not close' },
} as const satisfies OptionTable;

export type ReferenceLimits = OptionValues<typeof REFERENCE_LIMIT_OPTIONS>;
export const DEFAULT_REFERENCE_LIMITS: ReferenceLimits = defaultsOf(REFERENCE_LIMIT_OPTIONS);

/**
 * The limits among a server's options, validated by the same table as the CLI (programmatic
 * callers get the same errors). Only limit keys are kept, so /metrics can show them without
 * leaking anything else (a broadcast key).
 */
export function resolveLimits(opts: Partial<ReferenceLimits>): ReferenceLimits {
  const values: Record<string, unknown> = {};
  for (const k of Object.keys(REFERENCE_LIMIT_OPTIONS) as Array<keyof ReferenceLimits>) if (opts[k] !== undefined) values[k] = opts[k];
  return parseOptions(REFERENCE_LIMIT_OPTIONS, { values, origin: 'server' });
}

