import { randomBytes } from 'node:crypto';

/**
 * Session ids and the state a session cache keeps: the identifiers of the connection's
 * subscriptions, byte for byte (streams are re-derived from them on restore, so a signed stream
 * is verified again). Encoded as `{"v":1,"ids":[...]}`.
 */

export function newSid(): string {
  return randomBytes(9).toString('base64url');
}

const single = new Map<string, string>();

/** Encoded state; the common one-subscription state is shared, so 10,000 sessions of one stream hold one string. */
export function encodeSession(ids: readonly string[]): string {
  if (ids.length !== 1) return JSON.stringify({ v: 1, ids });
  const id = ids[0]!;
  let s = single.get(id);
  if (s === undefined) {
    if (single.size >= 10_000) single.clear();
    single.set(id, (s = JSON.stringify({ v: 1, ids })));
  }
  return s;
}

export function decodeSession(state: string): string[] {
  try {
    const v = JSON.parse(state) as { v?: unknown; ids?: unknown };
    if (v.v !== 1 || !Array.isArray(v.ids)) return [];
    return v.ids.filter((x): x is string => typeof x === 'string');
  } catch {
    return [];
  }
}

/** `?sid=` or `X-ANYCABLE-RESTORE-SID` (header first, like anycable-go); empty means absent. */
export function restoreSidFrom(headerValue: string | string[] | undefined, query: URLSearchParams): string | undefined {
  const h = Array.isArray(headerValue) ? headerValue[0] : headerValue;
  if (h) return h;
  const q = query.get('sid');
  return q ? q : undefined;
}
