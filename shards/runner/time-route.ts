import type { Express, Request, Response } from 'express';
import { performance } from 'node:perf_hooks';

/**
 * `GET /time` → `{now}`: this runner's wall clock in ms, sub-millisecond. The coordinator's
 * `--shared-stream` mode exchanges with it before and after a run to measure each shard's clock
 * offset (NTP-style). Open like /health: it reveals nothing but the time.
 * Registration (one line in the app factory): `registerTimeRoute(app);`
 */
export function registerTimeRoute(app: Express): void {
  app.get('/time', (_req: Request, res: Response) => {
    res.json({ now: performance.timeOrigin + performance.now() });
  });
}
