import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

/**
 * A tiny real HTTP runner for the coordinator's failure tests: it speaks the runner service's
 * routes (/health, /jobs/:id, POST /bench-*?async=1, /time) and can be told to misbehave
 * (echo other params, report unknown ones, run its clock ahead). It records every request.
 */
export interface StandInOptions {
  token: string;
  /** The job's result; unless it has `params` (or `keepParams`), the query asked is echoed as its params, as a runner does. */
  result: unknown;
  keepParams?: boolean;
  /** The whole final job record, as crafted (overrides status/result). */
  jobBody?: unknown;
  /** Overrides merged into effectiveParams (a shard that would run something else). */
  effectiveOverride?: Record<string, unknown>;
  unknownParams?: string[];
  /** Added to this stand-in's /time answer: a clock running ahead (ms). */
  clockAheadMs?: number;
  /** A runner without the `GET /time` route (an image older than --shared-stream). */
  noTime?: boolean;
  /** The final record's log tail (default ['finished']). */
  logTail?: unknown[];
  /** Polls answered `running` before `done`. */
  runningPolls?: number;
  /** The job record's `plannedMs` (the runner's announced wall time), on every poll. */
  plannedMs?: number;
  /** Answers a request itself (a redirect, an endless body) when it returns true; checked before the token. */
  answer?: (path: string, res: ServerResponse) => boolean;
}

export interface StandIn {
  url: string;
  requests: { method: string; path: string; auth: string | undefined; at: number }[];
  close(): Promise<void>;
}

export async function startStandIn(o: StandInOptions): Promise<StandIn> {
  const requests: StandIn['requests'] = [];
  let polls = 0;
  let params: Record<string, string> = {};
  const server: Server = createServer((req: IncomingMessage, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    requests.push({ method: req.method ?? '', path: u.pathname + u.search, auth: req.headers.authorization, at: performance.now() });
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (o.answer?.(u.pathname, res)) return;
    if (u.pathname === '/health') return send(200, { status: 'ok', busy: false });
    if (u.pathname === '/time' && !o.noTime) return send(200, { now: Date.now() + (o.clockAheadMs ?? 0) });
    if (req.headers.authorization !== `Bearer ${o.token}`) return send(401, { statusCode: 401, error: 'Unauthorized', code: 'RR_ERR_AUTH_INVALID', message: 'bad token' });
    if (req.method === 'POST' && u.pathname.startsWith('/bench-')) {
      params = Object.fromEntries([...u.searchParams].filter(([k]) => k !== 'async'));
      return send(202, { jobId: 'job-1', status: 'queued', effectiveParams: { ...params, ...o.effectiveOverride }, unknownParams: o.unknownParams ?? [] });
    }
    if (u.pathname === '/jobs/job-1') {
      polls++;
      const plan = o.plannedMs === undefined ? {} : { plannedMs: o.plannedMs };
      if (polls <= (o.runningPolls ?? 0)) return send(200, { status: 'running', params, ...plan, progress: { phase: 'publish', published: polls }, logTail: [`poll ${polls}`] });
      if (o.jobBody !== undefined) return send(200, o.jobBody);
      const r = o.result;
      const result = !o.keepParams && typeof r === 'object' && r !== null && !Array.isArray(r) && !('params' in r) ? { ...r, params } : r;
      return send(200, { status: 'done', params, ...plan, progress: { phase: 'done' }, logTail: o.logTail ?? ['finished'], result });
    }
    return send(404, { statusCode: 404, error: 'Not Found', code: 'RR_ERR_NOT_FOUND', message: `no route ${u.pathname}` });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** A port that was just free and is now closed: connections to it are refused. */
export async function deadUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}
