import { ReboundError } from '../../lib/errors.ts';
import { parseOptions, type OptionTable, type OptionValues } from '../../lib/options.ts';
import { LEDGER_MAX_CELLS } from '../../engine/measure/ledger.ts';
import { checkTargetUrl, getTarget, whisperClientFor, WHISPER_TARGETS } from '../../engine/targets/index.ts';

/** Whispers options: the benchmark's defaults (n 1000, rooms 10, ramp 100, interval 100 ms, duration 30 s, payload 64 B). */
export const WHISPERS_OPTIONS = {
  target: { type: 'string', default: 'replay', env: ['TARGET', 'PROTOCOL'], doc: `target name (${WHISPER_TARGETS.join(', ')})` },
  url: { type: 'optional-string', default: undefined, env: ['TARGET_URL'], doc: 'base URL of an already running target (CLI only); default: start it locally' },
  clients: { type: 'int', default: 1000, min: 2, max: 18_000, env: ['NUM_CLIENTS'], aliases: ['n'], doc: 'clients, dealt round-robin over the rooms' },
  rooms: { type: 'int', default: 10, min: 1, max: 10_000, env: ['ROOMS'], doc: 'rooms (clients per room = n / rooms)' },
  ramp: { type: 'int', default: 100, min: 1, max: 100_000, env: ['RAMP_RATE'], doc: 'connects per second' },
  interval: { type: 'int', default: 100, min: 1, max: 60_000, env: ['INTERVAL_MS'], doc: 'ms between whispers of one client' },
  duration: { type: 'number', default: 30, min: 0.1, max: 3600, env: ['DURATION_SEC'], doc: 'seconds of whispering' },
  payload: { type: 'int', default: 64, min: 0, max: 65_536, env: ['PAYLOAD_BYTES'], doc: 'padding bytes per whisper' },
  roomPrefix: { type: 'string', default: 'whisper-room', pattern: /^[\w.:-]{1,128}$/, env: ['ROOM_PREFIX'], doc: 'rooms are <prefix>-<i % rooms>' },
  settle: { type: 'int', default: 3000, min: 0, max: 600_000, env: ['SETTLE_MS'], doc: 'ms to wait for the last whispers (ends early once complete)' },
} as const satisfies OptionTable;

export type WhispersOptions = OptionValues<typeof WHISPERS_OPTIONS>;

/**
 * Whispers fan out inside rooms: the benchmark's default (1000 clients, 10 rooms, 30 s at 100 ms)
 * needs 30M ledger cells (150 MB), so this runner allows twice the jitter runner's cap.
 */
const WHISPERS_MAX_CELLS = 2 * LEDGER_MAX_CELLS;

export const whispersPerClient = (o: WhispersOptions) => Math.max(1, Math.floor((o.duration * 1000) / o.interval));

/** `registry` is injectable so the refusal is testable while every local target has whispers. */
export function parseWhispersOptions(src: Parameters<typeof parseOptions>[1], registry?: { supported: (target: string) => boolean }): WhispersOptions {
  return checkWhispersOptions(parseOptions(WHISPERS_OPTIONS, src), registry);
}

/** The rules only the combination can break, over values already parsed. */
export function checkWhispersOptions(o: WhispersOptions, registry: { supported: (target: string) => boolean } = { supported: (t) => whisperClientFor(t) !== undefined }): WhispersOptions {
  getTarget(o.target);
  if (!registry.supported(o.target)) {
    throw new ReboundError('RR_ERR_TARGET_UNSUPPORTED', `whispers are not supported by this target ("${o.target}"): its protocol has no client-to-client messages; supported: ${WHISPER_TARGETS.join(', ')}`, { details: { target: o.target } });
  }
  if (o.rooms > o.clients) throw new ReboundError('RR_ERR_OPTION_INVALID', `rooms (${o.rooms}) exceeds clients (${o.clients})`, { details: { option: 'rooms' } });
  // One ledger per room: peers x (peers x whispers each) cells.
  const peers = Math.ceil(o.clients / o.rooms);
  const cells = o.rooms * peers * peers * whispersPerClient(o);
  if (cells > WHISPERS_MAX_CELLS) {
    throw new ReboundError('RR_ERR_OPTION_INVALID', `the delivery ledger would need ${cells} cells (rooms x peers^2 x whispers per client) > ${WHISPERS_MAX_CELLS}: use more rooms, fewer clients per shard, a shorter duration or a longer interval`, { details: { option: 'clients' } });
  }
  checkTargetUrl('url', o.url);
  return o;
}
