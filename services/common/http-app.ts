import express, { type NextFunction, type Request, type Response } from 'express';
import { checkBearer } from '../../lib/bearer.ts';
import { ReboundError, toErrorBody } from '../../lib/errors.ts';
import { parseBroadcastBody, type Broadcast } from './broadcast.ts';
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

/**
 * The HTTP surface every service under test shares: `/_broadcast`, `/publish-local`,
 * `/health`, `/metrics`. The body is read raw so that unreadable JSON (400) and a wrong shape
 * (422) are told apart; express's own JSON parser would fold both into one error.
 */
export function createServiceApp(opts: ServiceHttpOptions) {
  const app = express();
  const monitor = createProcessMonitor();
  const counters = { broadcastsAccepted: 0, broadcastRequests: 0, broadcastRejected: 0 };
  app.disable('x-powered-by');
  // Which process answered: with --workers, shows which worker a request landed on.
  const pid = String(process.pid);
  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('X-Rebound-Pid', pid);
    next();
  });
  const raw = express.raw({ type: () => true, limit: opts.bodyLimitBytes ?? 10 * 1024 * 1024 });

  const auth = (req: Request, res: Response, next: NextFunction) => {
    if (!opts.broadcastKey) return next();
    const err = checkBearer(req.headers.authorization, opts.broadcastKey, 'BROADCAST_KEY');
    if (err) {
      counters.broadcastRejected++;
      return sendError(res, err);
    }
    next();
  };

  const accept = async (req: Request, res: Response) => {
    counters.broadcastRequests++;
    let batch: Broadcast[];
    try {
      batch = parseBroadcastBody(Buffer.isBuffer(req.body) ? req.body : undefined);
      await opts.deliver(batch);
    } catch (err) {
      counters.broadcastRejected++;
      return sendError(res, err);
    }
    counters.broadcastsAccepted += batch.length;
    res.status(201).json({ accepted: batch.length });
  };

  app.post('/_broadcast', auth, raw, accept);
  // The diagnostic path from the benchmark: the server emits the sequence itself, so comparing
  // its latency with /_broadcast's isolates what the publisher's HTTP hop costs.
  app.post('/publish-local', auth, raw, (req: Request, res: Response) => {
    let plan: PublishLocalPlan;
    try {
      plan = parsePublishLocal(Buffer.isBuffer(req.body) ? req.body : undefined, req.query as Record<string, unknown>);
    } catch (err) {
      return sendError(res, err);
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
    res.status(202).json({ status: 'publishing-local', scheduled: plan.count, stream: plan.stream, intervalMs: plan.intervalMs, delaySec: plan.delaySec });
  });
  app.get('/health', (_req, res) => {
    res.json({ status: 'ok', service: opts.name });
  });
  app.get('/metrics', async (_req, res) => {
    const own = await opts.stats();
    res.json({ service: opts.name, ...own, ...counters, ...monitor.snapshot() });
  });
  app.use((_req: Request, res: Response) => sendError(res, new ReboundError('RR_ERR_NOT_FOUND', 'no such route')));
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    sendError(res, bodyReadError(err));
  });
  return { app, close: () => monitor.stop() };
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
