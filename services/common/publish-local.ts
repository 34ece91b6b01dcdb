import { ReboundError } from '../../lib/errors.ts';
import { parseOptions, type OptionValues } from '../../lib/options.ts';

export const PUBLISH_LOCAL_OPTIONS = {
  stream: { type: 'string', default: 'bench', maxLength: 1024, pattern: /^.+$/s, doc: 'stream (room/topic) to emit on' },
  count: { type: 'int', default: 1, min: 1, max: 100_000, doc: 'messages to emit' },
  intervalMs: { type: 'int', default: 0, min: 0, max: 60_000, doc: 'pause between messages' },
  runId: { type: 'string', default: 'local', maxLength: 128, doc: 'runId written into each payload' },
} as const;

export type PublishLocalPlan = OptionValues<typeof PUBLISH_LOCAL_OPTIONS>;

/** Body `{stream, count, intervalMs, runId}`; the server then emits `{seq, sentAt, runId}` payloads itself. */
export function parsePublishLocal(raw: Buffer | undefined): PublishLocalPlan {
  let body: unknown;
  try {
    body = JSON.parse(raw?.toString('utf8') ?? '');
  } catch (err) {
    throw new ReboundError('RR_ERR_BODY_UNREADABLE', `body is not valid JSON: ${(err as Error).message}`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ReboundError('RR_ERR_OPTION_INVALID', 'body must be an object {stream, count, intervalMs, runId}');
  }
  return parseOptions(PUBLISH_LOCAL_OPTIONS, { values: body as Record<string, unknown>, origin: 'body' });
}
