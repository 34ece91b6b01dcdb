import { ReboundError } from '../../lib/errors.ts';

/** One broadcast as accepted at `POST /_broadcast` (anycable-go's shape). */
export interface Broadcast {
  stream: string;
  data: string;
  meta?: { exclude_socket?: string };
  /** Publisher's retry key (replay server: a retry within the window is stored once). Header `Idempotency-Key` for a single message. */
  idempotencyKey?: string;
}

/** Upper bounds that keep one request from monopolising a server under test. */
export const BROADCAST_LIMITS = Object.freeze({ maxBatch: 10_000, maxStreamLength: 1024, maxIdempotencyKeyLength: 256 });

/**
 * Parse and validate a whole `/_broadcast` body before anything is delivered, so a batch is
 * all-or-nothing: a 201 always means every message reached the fan-out.
 * Unparseable bytes are 400 (RR_ERR_BODY_UNREADABLE); well-formed JSON of the wrong shape is 422.
 */
export function parseBroadcastBody(raw: Buffer | string | undefined): Broadcast[] {
  const text = raw === undefined ? '' : typeof raw === 'string' ? raw : raw.toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new ReboundError('RR_ERR_BODY_UNREADABLE', `body is not valid JSON: ${(err as Error).message}`);
  }
  const items = Array.isArray(body) ? body : [body];
  if (items.length === 0) throw new ReboundError('RR_ERR_BROADCAST_INVALID', 'broadcast array is empty');
  if (items.length > BROADCAST_LIMITS.maxBatch) {
    throw new ReboundError('RR_ERR_BROADCAST_INVALID', `batch of ${items.length} exceeds the limit of ${BROADCAST_LIMITS.maxBatch}`);
  }
  return items.map((item, index) => validateOne(item, Array.isArray(body) ? index : undefined));
}

function validateOne(item: unknown, index: number | undefined): Broadcast {
  const at = index === undefined ? '' : ` at index ${index}`;
  const fail = (msg: string) => new ReboundError('RR_ERR_BROADCAST_INVALID', `${msg}${at}; nothing was delivered`, { details: index === undefined ? {} : { index } });
  if (item === null || typeof item !== 'object' || Array.isArray(item)) throw fail('broadcast must be an object {"stream","data"}');
  const o = item as Record<string, unknown>;
  if (typeof o.stream !== 'string' || o.stream.length === 0) throw fail('"stream" must be a non-empty string');
  if (o.stream.length > BROADCAST_LIMITS.maxStreamLength) throw fail(`"stream" is longer than ${BROADCAST_LIMITS.maxStreamLength} characters`);
  if (typeof o.data !== 'string') throw fail(`"data" must be a string (got ${o.data === null ? 'null' : typeof o.data})`);
  const out: Broadcast = { stream: o.stream, data: o.data };
  if (o.idempotencyKey !== undefined) {
    if (typeof o.idempotencyKey !== 'string' || o.idempotencyKey.length === 0 || o.idempotencyKey.length > BROADCAST_LIMITS.maxIdempotencyKeyLength) throw fail(`"idempotencyKey" must be a string of 1 to ${BROADCAST_LIMITS.maxIdempotencyKeyLength} characters`);
    out.idempotencyKey = o.idempotencyKey;
  }
  if (o.meta !== undefined) {
    if (o.meta === null || typeof o.meta !== 'object' || Array.isArray(o.meta)) throw fail('"meta" must be an object');
    const m = o.meta as Record<string, unknown>;
    if (m.exclude_socket !== undefined && typeof m.exclude_socket !== 'string') throw fail('"meta.exclude_socket" must be a string');
    out.meta = m.exclude_socket === undefined ? {} : { exclude_socket: m.exclude_socket as string };
  }
  return out;
}
