import { createHash, timingSafeEqual } from 'node:crypto';
import { ReboundError } from './errors.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * THE bearer check of the tree (runner token, broadcast key, replay admin routes). Both sides
 * are hashed before the constant-time compare, so neither the key's length nor the position of
 * the first differing byte shows in the timing. `what` names the secret in the message.
 */
export function checkBearer(header: string | undefined, key: string, what = 'the key'): ReboundError | undefined {
  if (!header) return new ReboundError('RR_ERR_AUTH_MISSING', `Authorization: Bearer <${what}> is required`);
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  // Always compare, even when the header is malformed: the answer time says nothing about why.
  const same = timingSafeEqual(digest(m?.[1] ?? ''), digest(key));
  return m && same && key !== '' ? undefined : new ReboundError('RR_ERR_AUTH_INVALID', `bearer token does not match ${what}`);
}
