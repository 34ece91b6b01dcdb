import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { ReboundError, toErrorBody } from '../../lib/errors.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Bearer check in constant time: both sides are hashed first, so the comparison never depends on
 * the token's length or on where the first differing byte is.
 */
export function checkRunnerToken(header: string | undefined, token: string): ReboundError | undefined {
  if (!header) return new ReboundError('RR_ERR_AUTH_MISSING', 'Authorization: Bearer <BENCH_RUNNER_TOKEN> is required');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  const ok = timingSafeEqual(digest(m?.[1] ?? ''), digest(token));
  return m && ok ? undefined : new ReboundError('RR_ERR_AUTH_INVALID', 'bearer token does not match BENCH_RUNNER_TOKEN');
}

/** Paths that need the token; /health and everything else stay open. */
const PROTECTED = /^\/(bench-|jobs(\/|$)|results(\/|$)|reports(\/|$))/;

export function requireToken(token: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!token || !PROTECTED.test(req.path)) return next();
    const err = checkRunnerToken(req.headers.authorization, token);
    if (!err) return next();
    const body = toErrorBody(err);
    res.status(401).set('WWW-Authenticate', 'Bearer').json(body);
  };
}

/** Loopback hosts the runner may bind without a token. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}
