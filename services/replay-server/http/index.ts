import express, { type NextFunction, type Request, type Response } from 'express';
import { ReboundError } from '../../../lib/errors.ts';
import type { Broadcast } from '../../common/broadcast.ts';
import { checkBearer } from '../../../lib/bearer.ts';
import { createServiceApp, sendError } from '../../common/http-app.ts';
import type { Broker, PublishItem } from '../broker/types.ts';
import { toMessageJson } from '../protocol/codec.ts';

/** `/_broadcast` → broker items: `data` becomes the frame's `message` JSON once, here at the edge. */
export function toPublishItems(batch: readonly Broadcast[]): PublishItem[] {
  return batch.map((b) => {
    const item: PublishItem = { stream: b.stream, message: toMessageJson(b.data) };
    const ex = b.meta?.exclude_socket;
    if (ex) item.exclude = ex;
    return item;
  });
}

/** One worker's share of a rolling reload, as `POST /_admin/reload` reports it. */
export interface ReloadedWorker {
  oldPid: number;
  newPid: number;
  startedAt: number;
  endedAt: number;
}

/** Asks whoever owns the workers for a rolling reload: an HTTP status and body (cluster/reload.ts). */
export type ReloadRequester = () => Promise<{ status: number; body: unknown }>;

const isLoopback = (addr: string | undefined) => !!addr && (addr === '::1' || addr.startsWith('127.') || addr.startsWith('::ffff:127.'));

/**
 * The shared service HTTP surface (/_broadcast, /publish-local, /health, /metrics) wired to the
 * broker, plus /_admin/reload.
 *
 * `201` on `/_broadcast` means "stored and handed to the fan-out": the shared app awaits
 * `deliver`, which resolves once the broker stored the batch (with --workers, once the primary
 * acknowledged it) and fails with a 503 RR_ERR_REPLAY_STORE_FAILED otherwise.
 */
export function createReplayHttp(opts: {
  broadcastKey: string;
  maxBodyBytes: number;
  broker: Broker;
  stats(): Promise<Record<string, unknown>>;
  onPublishError(err: unknown): void;
  reload?: ReloadRequester | undefined;
  /** True while the server stops: answers carry `Connection: close` so clients move on. */
  stopping?: () => boolean;
}) {
  const shared = createServiceApp({
    name: 'replay',
    broadcastKey: opts.broadcastKey || undefined,
    bodyLimitBytes: opts.maxBodyBytes,
    deliver: (batch) =>
      opts.broker.publish(toPublishItems(batch)).catch((e: unknown) => {
        opts.onPublishError(e);
        const why = e instanceof Error ? e.message : String(e);
        // Never 201 for a batch not known to be stored; when it may have been, the message says so.
        throw new ReboundError('RR_ERR_REPLAY_STORE_FAILED', (e as { maybeStored?: boolean }).maybeStored ? `broadcast not acknowledged: ${why}` : `broadcast not stored: ${why}`);
      }),
    stats: opts.stats,
  });
  const app = express();
  app.disable('x-powered-by');
  app.use((_req: Request, res: Response, next: NextFunction) => {
    if (opts.stopping?.()) res.setHeader('Connection', 'close');
    next();
  });

  app.post('/_admin/reload', (req: Request, res: Response) => {
    if (opts.broadcastKey) {
      const err = checkBearer(req.headers.authorization, opts.broadcastKey, 'BROADCAST_KEY');
      if (err) return sendError(res, err);
    } else if (!isLoopback(req.socket.remoteAddress)) {
      return sendError(res, new ReboundError('RR_ERR_ADMIN_FORBIDDEN', 'without a broadcast key, admin routes answer loopback peers only'));
    }
    if (!opts.reload) return sendError(res, new ReboundError('RR_ERR_RELOAD_UNAVAILABLE', 'rolling reload needs cluster mode (--workers 2 or more)'));
    opts.reload().then(
      (r) => res.status(r.status).json(r.body),
      (e: unknown) => sendError(res, new ReboundError('RR_ERR_RELOAD_FAILED', e instanceof Error ? e.message : String(e))),
    );
  });

  // A broker that can lose its store (Redis) makes the node degraded, not down: connections stay.
  app.get('/health', (_req: Request, res: Response, next: NextFunction) => {
    const h = opts.broker.health?.();
    if (!h || h.ok) return next();
    res.status(503).json({ status: 'degraded', service: 'replay', reason: h.reason ?? 'broker unavailable' });
  });

  app.use(shared.app);
  return { app, close: shared.close };
}
