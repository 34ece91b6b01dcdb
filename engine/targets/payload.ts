/**
 * What a client-side decoder makes of an arrival: one of the publisher's payloads
 * (engine/measure/publisher.ts writes them) or something else. It lives with the clients because
 * it reads what they hand over: an adapter that already parsed the frame (AnyCable's wire is
 * JSON) passes `value`, and no second parse happens here.
 */

export interface PublishPayload {
  seq: number;
  sentAt: number;
  runId: string;
  /** Filler to reach the requested message size. */
  pad?: string;
}

/** `text` parsed as JSON; undefined when it is not JSON (the clients' frames and payloads are untrusted). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** An arrival's payload as an object: the client's own parse when it made one, else `data` parsed. */
export function payloadOf(m: string | { readonly data: string; readonly value?: unknown }): Partial<PublishPayload> | undefined {
  const p = typeof m !== 'string' && m.value !== undefined ? m.value : parseJson(typeof m === 'string' ? m : m.data);
  return typeof p === 'object' && p !== null ? (p as Partial<PublishPayload>) : undefined;
}

/**
 * A received broadcast's payload when it is one of this run's (`runId`) with a numeric `seq` and
 * `sentAt`; undefined for anything else (another run's message, unparsable or foreign data).
 */
export function readPayload(m: string | { readonly data: string; readonly value?: unknown }, runId: string): { seq: number; sentAt: number } | undefined {
  const p = payloadOf(m);
  return p !== undefined && p.runId === runId && typeof p.seq === 'number' && typeof p.sentAt === 'number' ? { seq: p.seq, sentAt: p.sentAt } : undefined;
}
