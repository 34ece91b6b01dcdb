import { ReboundError } from '../../lib/errors.ts';
import { parseOptions, type OptionValues } from '../../lib/options.ts';

export const PUBLISH_LOCAL_OPTIONS = {
  stream: { type: 'string', default: 'bench', maxLength: 1024, pattern: /^.+$/s, doc: 'stream (room/topic) to emit on' },
  count: { type: 'int', default: 1, min: 1, max: 100_000, aliases: ['total'], doc: 'messages to emit' },
  intervalMs: { type: 'int', default: 0, min: 0, max: 60_000, aliases: ['interval'], doc: 'pause between messages' },
  delaySec: { type: 'int', default: 0, min: 0, max: 3600, aliases: ['delay'], doc: 'wait before the first message' },
  runId: { type: 'string', default: 'local', maxLength: 128, doc: 'runId written into each payload' },
} as const;

export type PublishLocalPlan = OptionValues<typeof PUBLISH_LOCAL_OPTIONS>;

/**
 * The benchmark's server takes its plan as a query string (`?total&interval&stream&delay`, with
 * defaults 120 / 500 ms / `benchmark` / 0 s); accepting it lets that benchmark's runner drive
 * Rebound's servers unchanged.
 */
const BENCHMARK_QUERY_DEFAULTS = { count: 120, intervalMs: 500, stream: 'benchmark' };

/**
 * Body `{stream, count, intervalMs, delaySec, runId}`, or, with an empty body, the benchmark's
 * query string; the server then emits `{seq, sentAt, runId, text}` payloads itself.
 */
export function parsePublishLocal(raw: Buffer | undefined, query: Record<string, unknown> = {}): PublishLocalPlan {
  const text = raw?.toString('utf8') ?? '';
  if (text.trim() === '' && Object.keys(query).length > 0) {
    // A default fills in only where the query names the option under none of its names: the
    // validator refuses one option given under two names (`count=120&total=3`).
    const values: Record<string, unknown> = { ...query };
    for (const [key, value] of Object.entries(BENCHMARK_QUERY_DEFAULTS)) {
      const names = [key, ...((PUBLISH_LOCAL_OPTIONS[key as keyof typeof PUBLISH_LOCAL_OPTIONS] as { aliases?: readonly string[] }).aliases ?? [])];
      if (!names.some((n) => n in values)) values[key] = value;
    }
    return parseOptions(PUBLISH_LOCAL_OPTIONS, { values, origin: 'query' });
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new ReboundError('RR_ERR_BODY_UNREADABLE', `body is not valid JSON: ${(err as Error).message}`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ReboundError('RR_ERR_OPTION_INVALID', 'body must be an object {stream, count, intervalMs, delaySec, runId}');
  }
  return parseOptions(PUBLISH_LOCAL_OPTIONS, { values: body as Record<string, unknown>, origin: 'body' });
}
