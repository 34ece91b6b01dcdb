import express, { type NextFunction, type Request, type Response } from 'express';
import { ReboundError, toErrorBody } from '../../../lib/errors.ts';
import type { Broadcast } from '../../common/broadcast.ts';
import { checkBearer, createServiceApp, sendError } from '../../common/http-app.ts';
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

/** Body encodings the shared parser decodes; anything else is left to the shared app (it answers 415). */
const DECODABLE = new Set(['identity', 'gzip', 'x-gzip', 'deflate', 'br']);
const isLoopback = (addr: string | undefined) => !!addr && (addr === '::1' || addr.startsWith('127.') || addr.startsWith('::ffff:127.'));

/**
 * The shared service HTTP surface (/_broadcast, /publish-local, /health, /metrics) wired to the
 * broker, plus /_admin/reload.
 *
 * `201` on `/_broadcast` must mean "stored and handed to the fan-out", but the shared app
 * (services/common/http-app.ts) answers right after a synchronous `deliver`, while storing may
 * be asynchronous (with --workers it crosses to the primary). Without changing the shared app,
 * this front reads the body first, so the shared route then runs to `deliver` and its 201
 * within one synchronous call; the publish promise of that call is attached to the response
 * and the 201 leaves only once it resolved (a 503 RR_ERR_REPLAY_STORE_FAILED if it failed).
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
  const stored = new WeakMap<Response, Promise<void>>();
  let current: Response | undefined;
  const shared = createServiceApp({
    name: 'replay',
    broadcastKey: opts.broadcastKey || undefined,
    bodyLimitBytes: opts.maxBodyBytes,
    deliver: (batch) => {
      const p = opts.broker.publish(toPublishItems(batch));
      p.catch(opts.onPublishError);
      if (current) stored.set(current, p);
    },
    stats: opts.stats,
  });
  const app = express();
  app.disable('x-powered-by');
  const preRead = express.raw({ type: () => true, limit: opts.maxBodyBytes });
  app.use((_req: Request, res: Response, next: NextFunction) => {
    if (opts.stopping?.()) res.setHeader('Connection', 'close');
    next();
  });

  app.post('/_broadcast', (req: Request, res: Response, next: NextFunction) => {
    // Unauthorised or undecodable requests: the shared app answers (and counts) them as usual.
    if (opts.broadcastKey && checkBearer(req.headers.authorization, opts.broadcastKey)) return next();
    const enc = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
    if (!DECODABLE.has(enc)) return next();
    preRead(req, res, (err?: unknown) => {
      if (err) return sendError(res, bodyError(err));
      const json = res.json.bind(res);
      res.json = (body: unknown) => {
        const p = stored.get(res);
        if (res.statusCode !== 201 || !p) return json(body);
        p.then(
          () => json(body),
          (e: unknown) => {
            res.status(503);
            json(toErrorBody(new ReboundError('RR_ERR_REPLAY_STORE_FAILED', `broadcast not stored: ${e instanceof Error ? e.message : String(e)}`)));
          },
        );
        return res;
      };
      current = res;
      try {
        next();
      } finally {
        current = undefined;
      }
    });
  });

  app.post('/_admin/reload', (req: Request, res: Response) => {
    if (opts.broadcastKey) {
      const err = checkBearer(req.headers.authorization, opts.broadcastKey);
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

  app.use(shared.app);
  return { app, close: shared.close };
}

/** body-parser's errors as coded ones (the same mapping the shared app applies). */
function bodyError(err: unknown): unknown {
  const e = err as { type?: string; status?: number; message?: string } | undefined;
  if (e?.type === 'entity.too.large') return new ReboundError('RR_ERR_PAYLOAD_TOO_LARGE', 'request body too large');
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) return new ReboundError('RR_ERR_BODY_UNREADABLE', e.message ?? 'unreadable body');
  return err;
}
