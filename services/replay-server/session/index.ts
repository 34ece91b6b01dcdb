import { randomBytes } from 'node:crypto';

/**
 * Session ids and the state a session cache keeps: the identifiers of the connection's
 * subscriptions, byte for byte (streams are re-derived from them on restore, so a signed stream
 * is verified again). Encoded as `{"v":1,"ids":[...]}`.
 */

export function newSid(): string {
  return randomBytes(9).toString('base64url');
}

/**
 * Encoded state, built only when a session is restored (the store keeps identifiers and applies
 * changes incrementally, see broker/memory.ts), so its size is bounded by maxSessionBytes.
 */
export function encodeSession(ids: readonly string[]): string {
  return JSON.stringify({ v: 1, ids });
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
