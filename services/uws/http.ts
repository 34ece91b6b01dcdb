import { STATUS_CODES } from 'node:http';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { ReboundError } from '../../lib/errors.ts';
import { DEFAULT_BODY_LIMIT_BYTES, type createServiceRoutes, type RouteAnswer } from '../common/http-app.ts';
import type { UwsApp, UwsRequest, UwsResponse } from './load.ts';

type Routes = ReturnType<typeof createServiceRoutes>;

/** A request as a service's own extra routes see it (read inside uWS's handler call). */
export interface ExtraRouteRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  /** The peer's address (read on demand: uWS formats it as text). */
  remoteAddress(): string;
}

/**
 * The shared HTTP routes (services/common/http-app.ts) on uWS's own HTTP: the same paths,
 * statuses and error bodies as express gives the other servers, including what express's body
 * reader does (10 MiB limit → 413, Content-Encoding gzip/deflate/br/identity, anything else 415).
 */
export function mountServiceRoutes(
  app: UwsApp,
  routes: Routes,
  opts: {
    bodyLimitBytes?: number;
    stopping(): boolean;
    /** A service's own routes (the replay server's /_admin/reload, degraded /health), tried first: undefined passes on. */
    extra?(req: ExtraRouteRequest): RouteAnswer | Promise<RouteAnswer> | undefined;
  },
): void {
  const limit = opts.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const pid = String(process.pid);

  const send = (res: UwsResponse, state: { aborted: boolean }, a: RouteAnswer) => {
    if (state.aborted) return;
    state.aborted = true; // answered: nothing more may touch `res`
    res.cork(() => {
      res.writeStatus(`${a.status} ${STATUS_CODES[a.status] ?? ''}`).writeHeader('Content-Type', 'application/json; charset=utf-8').writeHeader('X-Rebound-Pid', pid);
      // A stopping server asks clients to move on (as the replay server does).
      res.end(JSON.stringify(a.body), opts.stopping());
    });
  };

  app.any('/*', (res, req) => {
    const state = { aborted: false };
    res.onAborted(() => (state.aborted = true));
    // uWS's request object is valid only inside this call: read what the routes need now.
    const method = req.getMethod().toUpperCase();
    const path = req.getUrl();
    const query = Object.fromEntries(new URLSearchParams(req.getQuery() ?? ''));
    const authorization = header(req, 'authorization');
    const idempotencyKey = header(req, 'idempotency-key');
    const encoding = (header(req, 'content-encoding') ?? 'identity').trim().toLowerCase();
    const answer = (a: RouteAnswer | Promise<RouteAnswer>) =>
      void Promise.resolve(a).then(
        (x) => send(res, state, x),
        (err: unknown) => send(res, state, routes.error(err)),
      );

    const own = opts.extra?.({ method, path, authorization, remoteAddress: () => Buffer.from(res.getRemoteAddressAsText()).toString() });
    if (own) return answer(own);
    if (method === 'GET' && path === '/health') return answer(routes.health());
    if (method === 'GET' && path === '/metrics') return answer(routes.metrics());
    if (method !== 'POST' || (path !== '/_broadcast' && path !== '/publish-local')) return answer(routes.notFound());
    const refused = routes.auth(authorization);
    if (refused) return answer(refused);
    readBody(res, limit, (err, raw) => {
      if (err) return answer(routes.error(err));
      let body: Buffer;
      try {
        body = decode(raw!, encoding, limit);
      } catch (e) {
        return answer(routes.error(e));
      }
      answer(path === '/_broadcast' ? routes.broadcast(body, idempotencyKey) : routes.publishLocal(body, query));
    });
  });
}

const header = (req: UwsRequest, name: string): string | undefined => {
  const v = req.getHeader(name);
  return v === '' ? undefined : v;
};

/** Collect the body (uWS hands out chunks it reuses: copy each), refusing past `limit`. */
function readBody(res: UwsResponse, limit: number, done: (err: ReboundError | undefined, body?: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  res.onData((chunk, isLast) => {
    if (!over) {
      size += chunk.byteLength;
      if (size > limit) over = true;
      else chunks.push(Buffer.from(chunk.slice(0))); // one copy: uWS reuses `chunk` after this call
    }
    if (!isLast) return;
    if (over) done(new ReboundError('RR_ERR_PAYLOAD_TOO_LARGE', 'request body too large'));
    else done(undefined, Buffer.concat(chunks, size));
  });
}

/** Content-Encoding as express's body reader takes it; the decoded body is held to the same limit. */
function decode(raw: Buffer, encoding: string, limit: number): Buffer {
  const opts = { maxOutputLength: limit };
  try {
    switch (encoding) {
      case 'identity':
        return raw;
      case 'gzip':
        return gunzipSync(raw, opts);
      case 'deflate':
        return inflateSync(raw, opts);
      case 'br':
        return brotliDecompressSync(raw, opts);
    }
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw new ReboundError('RR_ERR_PAYLOAD_TOO_LARGE', 'request body too large');
    throw new ReboundError('RR_ERR_BODY_UNREADABLE', `body could not be decoded (${encoding}): ${(err as Error).message}`);
  }
  throw new ReboundError('RR_ERR_UNSUPPORTED_ENCODING', `Content-Encoding "${encoding}" is not supported (use gzip, deflate, br or identity)`);
}
