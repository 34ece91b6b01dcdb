import type { NextFunction, Request, Response } from 'express';
import { checkBearer } from '../../lib/bearer.ts';
import { toErrorBody } from '../../lib/errors.ts';

/**
 * The only requests answered without the token, matched exactly on method and raw path (no case
 * folding, no trailing slash, no percent-decoding): `/health` for load balancers and the
 * coordinator's preflight, `/time` because the coordinator's clock exchange (shards/coordinator/
 * clock.ts) calls it without a token and it reveals nothing but this machine's clock.
 */
export const OPEN_ROUTES: readonly string[] = ['GET /health', 'GET /time'];

const rawPath = (req: Request) => {
  const q = req.originalUrl.indexOf('?');
  return q < 0 ? req.originalUrl : req.originalUrl.slice(0, q);
};

/**
 * Deny by default: with a token configured, every request but OPEN_ROUTES needs it, including
 * paths that match no route, so a 404 never tells a stranger which paths exist.
 */
export function requireToken(token: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (!token || OPEN_ROUTES.includes(`${req.method} ${rawPath(req)}`)) return next();
    // lib/bearer.ts: the one constant-time check of the tree.
    const err = checkBearer(req.headers.authorization, token, 'BENCH_RUNNER_TOKEN');
    if (!err) return next();
    res.status(401).set('WWW-Authenticate', 'Bearer').json(toErrorBody(err));
  };
}

