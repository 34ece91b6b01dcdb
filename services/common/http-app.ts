import express, { type NextFunction, type Request, type Response } from 'express';
import { checkBearer } from '../../lib/bearer.ts';
import { ReboundError, toErrorBody } from '../../lib/errors.ts';
import { BROADCAST_LIMITS, parseBroadcastBody, type Broadcast } from './broadcast.ts';
import { createProcessMonitor } from './metrics.ts';
import { parsePublishLocal, type PublishLocalPlan } from './publish-local.ts';

export interface ServiceHttpOptions {
  /** Service name reported by /health and /metrics. */
  name: string;
  /** When set, `/_broadcast` and `/publish-local` need `Authorization: Bearer <key>`. */
  broadcastKey?: string | undefined;
  /**
   * Hand validated broadcasts to the fan-out. The 201 waits for a returned promise (e.g. stored by
   * a broker in another process); throwing or rejecting answers the error (a ReboundError's
   * status, else 500) and counts the request as rejected.
   */
  deliver(batch: Broadcast[]): void | Promise<void>;
  /** Service-specific counters merged into /metrics (connections, subscriptions, ...); may be async (e.g. a broker across processes). */
  stats(): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** Max request body, bytes. @default 10 MiB */
  bodyLimitBytes?: number;
}

/** The one bearer check (lib/bearer.ts), re-exported for the services that import it from here. */
export { checkBearer };

export function sendError(res: Response, err: unknown): void {
  const body = toErrorBody(err);
  if (!res.headersSent) res.status(body.statusCode).json(body);
}

/** A route's answer, whichever HTTP library carries it. */
export interface RouteAnswer {
  status: number;
  body: unknown;
}

/** An error as a route's answer (a ReboundError's status and body, else 500). */
export const errorAnswer = (err: unknown): RouteAnswer => {
  const body = toErrorBody(err);
  return { status: body.statusCode, body };
};

/**
 * The routes every service under test shares, apart from any HTTP library: express carries them
 * for ws and Socket.IO (`createServiceApp`), uWS's own HTTP for services/uws. Bodies arrive raw
 * (already decoded from their Content-Encoding) so that unreadable JSON (400) and a wrong shape
 * (422) are told apart.
 */
export function createServiceRoutes(opts: ServiceHttpOptions) {
  const monitor = createProcessMonitor();
  const counters = { broadcastsAccepted: 0, broadcastRequests: 0, broadcastRejected: 0 };
  return {
    /** The bearer check of `/_broadcast` and `/publish-local`: an answer when refused. */
    auth(authorization: string | undefined): RouteAnswer | undefined {
      if (!opts.broadcastKey) return undefined;
      const err = checkBearer(authorization, opts.broadcastKey, 'BROADCAST_KEY');
      if (!err) return undefined;
      counters.broadcastRejected++;
      return errorAnswer(err);
    },

    async broadcast(raw: Buffer | undefined, idempotencyKey: string | string[] | undefined): Promise<RouteAnswer> {
      counters.broadcastRequests++;
      let batch: Broadcast[];
      try {
        batch = parseBroadcastBody(raw);
        if (typeof idempotencyKey === 'string') {
          // One key names one message; a batch names its own per message.
          if (batch.length !== 1) throw new ReboundError('RR_ERR_BROADCAST_INVALID', 'the Idempotency-Key header names a single message; give a batch "idempotencyKey" per message');
          if (idempotencyKey.length === 0 || idempotencyKey.length > BROADCAST_LIMITS.maxIdempotencyKeyLength) throw new ReboundError('RR_ERR_BROADCAST_INVALID', `Idempotency-Key must be 1 to ${BROADCAST_LIMITS.maxIdempotencyKeyLength} characters`);
          batch[0]!.idempotencyKey ??= idempotencyKey;
        }
        await opts.deliver(batch);
      } catch (err) {
        counters.broadcastRejected++;
        return errorAnswer(err);
      }
      counters.broadcastsAccepted += batch.length;
      return { status: 201, body: { accepted: batch.length } };
    },

    // The diagnostic path from the benchmark: the server emits the sequence itself, so comparing
    // its latency with /_broadcast's isolates what the publisher's HTTP hop costs.
    publishLocal(raw: Buffer | undefined, query: Record<string, unknown>): RouteAnswer {
      let plan: PublishLocalPlan;
      try {
        plan = parsePublishLocal(raw, query);
      } catch (err) {
        return errorAnswer(err);
      }
      let seq = 0;
      const emit = () => {
        seq++;
        // `text` as the benchmark's server writes it, so its clients see the payload they expect.
        const data = JSON.stringify({ seq, sentAt: Date.now(), runId: plan.runId, text: `msg_${seq}` });
        // Nobody waits on a scheduled emit: a failure is counted, never thrown into a timer.
        Promise.resolve()
          .then(() => opts.deliver([{ stream: plan.stream, data }]))
          .then(
            () => counters.broadcastsAccepted++,
            () => counters.broadcastRejected++,
          );
        if (seq < plan.count) setTimeout(emit, plan.intervalMs).unref();
      };
      if (plan.delaySec > 0) setTimeout(emit, plan.delaySec * 1000).unref();
      else setImmediate(emit);
      return { status: 202, body: { status: 'publishing-local', scheduled: plan.count, stream: plan.stream, intervalMs: plan.intervalMs, delaySec: plan.delaySec } };
    },

    health: (): RouteAnswer => ({ status: 200, body: { status: 'ok', service: opts.name } }),

    async metrics(): Promise<RouteAnswer> {
      const own = await opts.stats();
      return { status: 200, body: { service: opts.name, ...own, ...counters, ...monitor.snapshot() } };
    },

    notFound: (): RouteAnswer => errorAnswer(new ReboundError('RR_ERR_NOT_FOUND', 'no such route')),
    error: errorAnswer,
    close: () => monitor.stop(),
  };
}

/** Express's body reader: any type, raw, 10 MiB unless told (decodes gzip, deflate, br). */
export const DEFAULT_BODY_LIMIT_BYTES = 10 * 1024 * 1024;

/**
 * The HTTP surface every service under test shares, on express: `/_broadcast`,
 * `/publish-local`, `/health`, `/metrics` (the routes above).
 */
export function createServiceApp(opts: ServiceHttpOptions) {
  const app = express();
  const routes = createServiceRoutes(opts);
  app.disable('x-powered-by');
  // Which process answered: with --workers, shows which worker a request landed on.
  const pid = String(process.pid);
  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('X-Rebound-Pid', pid);
    next();
  });
  const raw = express.raw({ type: () => true, limit: opts.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES });
  const answer = (res: Response, a: RouteAnswer) => {
    if (!res.headersSent) res.status(a.status).json(a.body);
  };
  const auth = (req: Request, res: Response, next: NextFunction) => {
    const refused = routes.auth(req.headers.authorization);
    if (refused) return answer(res, refused);
    next();
  };
  const body = (req: Request) => (Buffer.isBuffer(req.body) ? req.body : undefined);

  app.post('/_broadcast', auth, raw, async (req: Request, res: Response) => answer(res, await routes.broadcast(body(req), req.headers['idempotency-key'])));
  app.post('/publish-local', auth, raw, (req: Request, res: Response) => answer(res, routes.publishLocal(body(req), req.query as Record<string, unknown>)));
  app.get('/health', (_req, res) => answer(res, routes.health()));
  app.get('/metrics', async (_req, res) => answer(res, await routes.metrics()));
  app.use((_req: Request, res: Response) => answer(res, routes.notFound()));
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    answer(res, routes.error(bodyReadError(err)));
  });
  return { app, close: routes.close };
}

/**
 * Map body-parser's errors onto coded ones. Its 4xx errors are the client's fault whatever their
 * type (an unknown Content-Encoding is 415, not a server failure); anything else stays internal.
 */
export function bodyReadError(err: unknown): unknown {
  const e = err as { type?: string; status?: number; message?: string; encoding?: string; charset?: string } | undefined;
  if (e?.type === 'entity.too.large') return new ReboundError('RR_ERR_PAYLOAD_TOO_LARGE', 'request body too large');
  if (e?.type === 'encoding.unsupported') return new ReboundError('RR_ERR_UNSUPPORTED_ENCODING', `Content-Encoding "${e.encoding ?? ''}" is not supported (use gzip, deflate, br or identity)`);
  if (e?.type === 'charset.unsupported') return new ReboundError('RR_ERR_UNSUPPORTED_ENCODING', e.message ?? 'unsupported charset');
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) return new ReboundError('RR_ERR_BODY_UNREADABLE', e.message ?? 'unreadable body');
  return err;
}
