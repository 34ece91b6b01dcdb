import express, { type NextFunction, type Request, type Response } from 'express';
import { ReboundError } from '../../../lib/errors.ts';
import type { Broadcast } from '../../common/broadcast.ts';
import { checkBearer } from '../../../lib/bearer.ts';
import { createServiceApp, createServiceRoutes, errorAnswer, type RouteAnswer, type ServiceHttpOptions } from '../../common/http-app.ts';
import { mountServiceRoutes } from '../../uws/http.ts';
import type { UwsApp } from '../../uws/load.ts';
import type { Broker, PublishItem } from '../broker/types.ts';
import { toMessageJson } from '../protocol/codec.ts';

/** `/_broadcast` → broker items: `data` becomes the frame's `message` JSON once, here at the edge. */
export function toPublishItems(batch: readonly Broadcast[]): PublishItem[] {
  return batch.map((b) => {
    const item: PublishItem = { stream: b.stream, message: toMessageJson(b.data) };
    const ex = b.meta?.exclude_socket;
    if (ex) item.exclude = ex;
    if (b.idempotencyKey !== undefined) item.idempotencyKey = b.idempotencyKey;
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

/** What the replay server's HTTP surface needs, whichever library carries it (express or uWS). */
export interface ReplayHttpOptions {
  broadcastKey: string;
  maxBodyBytes: number;
  /** Largest accepted message (its `data`): 413 beyond, nothing of the batch stored. */
  maxMessageBytes?: number;
  broker: Broker;
  stats(): Promise<Record<string, unknown>>;
  onPublishError(err: unknown): void;
  reload?: ReloadRequester | undefined;
  /** True while the server stops: answers carry `Connection: close` so clients move on. */
  stopping?: () => boolean;
}

/**
 * The shared service routes' options for the replay server. `201` on `/_broadcast` means "stored
 * and handed to the fan-out": the shared routes await `deliver`, which resolves once the broker
 * stored the batch (with --workers, once the primary acknowledged it) and fails with a 503
 * RR_ERR_REPLAY_STORE_FAILED otherwise.
 */
export function replayServiceOptions(opts: ReplayHttpOptions): ServiceHttpOptions {
  return {
    name: 'replay',
    broadcastKey: opts.broadcastKey || undefined,
    bodyLimitBytes: opts.maxBodyBytes,
    deliver: (batch) => {
      const max = opts.maxMessageBytes;
      if (max !== undefined)
        for (let i = 0; i < batch.length; i++) {
          const n = Buffer.byteLength(batch[i]!.data);
          if (n > max) throw new ReboundError('RR_ERR_PAYLOAD_TOO_LARGE', `message${batch.length > 1 ? ` at index ${i}` : ''} is ${n} bytes, over the limit of ${max} bytes (maxMessageBytes); nothing was stored`, { details: { limit: max, size: n, ...(batch.length > 1 ? { index: i } : {}) } });
        }
      return opts.broker.publish(toPublishItems(batch)).catch((e: unknown) => {
        opts.onPublishError(e);
        const why = e instanceof Error ? e.message : String(e);
        // Never 201 for a batch not known to be stored; when it may have been, the message says so.
        throw new ReboundError('RR_ERR_REPLAY_STORE_FAILED', (e as { maybeStored?: boolean }).maybeStored ? `broadcast not acknowledged: ${why}` : `broadcast not stored: ${why}`);
      });
    },
    stats: opts.stats,
  };
}

/** `POST /_admin/reload`: bearer with a broadcast key, else loopback peers only; needs cluster mode. */
export function adminReload(opts: ReplayHttpOptions, authorization: string | undefined, remoteAddress: string | undefined): RouteAnswer | Promise<RouteAnswer> {
  if (opts.broadcastKey) {
    const err = checkBearer(authorization, opts.broadcastKey, 'BROADCAST_KEY');
    if (err) return errorAnswer(err);
  } else if (!isLoopback(remoteAddress)) {
    return errorAnswer(new ReboundError('RR_ERR_ADMIN_FORBIDDEN', 'without a broadcast key, admin routes answer loopback peers only'));
  }
  if (!opts.reload) return errorAnswer(new ReboundError('RR_ERR_RELOAD_UNAVAILABLE', 'rolling reload needs cluster mode (--workers 2 or more)'));
  // A stopping worker exits within its grace; a reload it asked for would outlive it and its
  // client would see the connection close unanswered. It answers now (the connection closes, the
  // client asks again and lands on a worker that stays).
  if (opts.stopping?.()) return errorAnswer(new ReboundError('RR_ERR_RELOAD_UNAVAILABLE', 'this worker is stopping: ask again'));
  return opts.reload().then(
    (r) => ({ status: r.status, body: r.body }),
    (e: unknown) => errorAnswer(new ReboundError('RR_ERR_RELOAD_FAILED', e instanceof Error ? e.message : String(e))),
  );
}

/** A broker that can lose its store (Redis) makes the node degraded, not down: connections stay. */
export function degradedHealth(broker: Broker): RouteAnswer | undefined {
  const h = broker.health?.();
  if (!h || h.ok) return undefined;
  return { status: 503, body: { status: 'degraded', service: 'replay', reason: h.reason ?? 'broker unavailable' } };
}

/** The shared service HTTP surface (/_broadcast, /publish-local, /health, /metrics) wired to the broker, plus /_admin/reload, on express (ws transport). */
export function createReplayHttp(opts: ReplayHttpOptions) {
  const shared = createServiceApp(replayServiceOptions(opts));
  const app = express();
  app.disable('x-powered-by');
  app.use((_req: Request, res: Response, next: NextFunction) => {
    if (opts.stopping?.()) res.setHeader('Connection', 'close');
    next();
  });
  const answer = (res: Response, a: RouteAnswer) => {
    if (res.headersSent) return;
    // A reload's answer comes after its worker began to leave (see the middleware above).
    if (opts.stopping?.()) res.setHeader('Connection', 'close');
    res.status(a.status).json(a.body);
  };
  app.post('/_admin/reload', (req: Request, res: Response) => {
    void Promise.resolve(adminReload(opts, req.headers.authorization, req.socket.remoteAddress)).then((a) => answer(res, a));
  });
  app.get('/health', (_req: Request, res: Response, next: NextFunction) => {
    const degraded = degradedHealth(opts.broker);
    if (!degraded) return next();
    answer(res, degraded);
  });

  app.use(shared.app);
  return { app, close: shared.close };
}

/** The same surface on uWS's own HTTP (uws transport): the shared routes' uWS mount plus the replay extras. */
export function mountReplayHttp(app: UwsApp, opts: ReplayHttpOptions): { close(): void } {
  const routes = createServiceRoutes(replayServiceOptions(opts));
  mountServiceRoutes(app, routes, {
    bodyLimitBytes: opts.maxBodyBytes,
    stopping: () => opts.stopping?.() === true,
    extra: (req) => {
      if (req.method === 'POST' && req.path === '/_admin/reload') return adminReload(opts, req.authorization, req.remoteAddress());
      if (req.method === 'GET' && req.path === '/health') return degradedHealth(opts.broker);
      return undefined;
    },
  });
  return { close: routes.close };
}
