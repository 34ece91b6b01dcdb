import type { Express, Request, Response } from 'express';

/**
 * `GET /time` → `{now}`: this runner's wall clock in ms: `Date.now()`, the very clock that stamps
 * `sentAt` and arrivals (performance.timeOrigin + now() is a monotonic clock that does not follow
 * an NTP step, so an offset measured with it would miss exactly the error it is for). The coordinator's
 * `--shared-stream` mode exchanges with it before and after a run to measure each shard's clock
 * offset (NTP-style). Open like /health: it reveals nothing but the time.
 * Registration (one line in the app factory): `registerTimeRoute(app);`
 */
export function registerTimeRoute(app: Express): void {
  app.get('/time', (_req: Request, res: Response) => {
    res.json({ now: Date.now() });
  });
}
