/**
 * Seeded generators of hostile and legal input for the fuzz suite: HTTP requests for the
 * services' shared edge and the chaos proxy's Toxiproxy API, and client frames for each protocol.
 * Sizes stay small enough that legal input cannot legitimately hold much memory (history keeps
 * what is broadcast), so a memory bound after the run means something.
 */
import type { Rng } from '../../lib/rng.ts';

export const pick = <T>(rng: Rng, a: readonly T[]): T => a[Math.floor(rng() * a.length)]!;
const int = (rng: Rng, lo: number, hi: number) => lo + Math.floor(rng() * (hi - lo + 1));
const bytes = (rng: Rng, n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(rng() * 256)));
const nest = (d: number) => '['.repeat(d) + ']'.repeat(d);
const deepObj = (d: number) => {
  let s = '"x"';
  for (let i = 0; i < d; i++) s = `{"a":${s}}`;
  return s;
};

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer | string;
}

const STREAMS = ['s0', 's1', 's2', 'fuzz', 'x'.repeat(1024), 'x'.repeat(1025), '', '\u0000', '😀', '../..'];

function broadcastItem(rng: Rng): unknown {
  return pick(rng, [
    () => ({ stream: pick(rng, STREAMS), data: 'd'.repeat(int(rng, 0, 512)) }),
    () => ({ stream: 's1', data: JSON.stringify({ seq: int(rng, 0, 9), sentAt: Date.now() }) }),
    () => ({ stream: 's1', data: { a: 1 } }),
    () => ({ stream: 5, data: 'x' }),
    () => ({ data: 'x' }),
    () => ({ stream: 's2', data: 'x', meta: pick(rng, [{ exclude_socket: 'nope' }, { exclude_socket: 5 }, null, [], 'x', {}]) }),
    () => null,
    () => 'str',
    () => [],
    () => ({ __proto__: { stream: 's' }, data: 'x' }),
  ])();
}

function body(rng: Rng): Buffer | string | undefined {
  return pick(rng, [
    () => JSON.stringify(broadcastItem(rng)),
    () => JSON.stringify(Array.from({ length: int(rng, 0, 20) }, () => broadcastItem(rng))),
    () => JSON.stringify({ stream: 's0', count: int(rng, -2, 4), intervalMs: int(rng, -1, 5), runId: pick(rng, ['r', 5, 'x'.repeat(200)]) }),
    () => '{"stream":',
    () => '',
    () => undefined,
    () => 'null',
    () => '1e999',
    () => nest(int(rng, 10, 5000)),
    () => deepObj(int(rng, 10, 2000)),
    () => bytes(rng, int(rng, 1, 4096)),
    () => '"' + 'y'.repeat(int(rng, 1000, 200_000)) + '"',
    () => JSON.stringify({ stream: 's0', data: 'z'.repeat(int(rng, 1000, 60_000)) }).replace('"data"', '"dat"'),
  ])();
}

/** A request against a Rebound service (replay, ws, Socket.IO): any answer but 5xx, errors in the one shape. */
export function serviceRequest(rng: Rng): FuzzRequest {
  const path = pick(rng, ['/_broadcast', '/_broadcast', '/_broadcast', '/publish-local', '/health', '/metrics', '/nope', '/_broadcast?x=1', '/%zz', '/' + 'p'.repeat(3000)]);
  const method = pick(rng, ['POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);
  const headers: Record<string, string> = {};
  if (rng() < 0.8) headers['content-type'] = pick(rng, ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'multipart/form-data; boundary=x', '']);
  if (rng() < 0.1) headers['content-encoding'] = pick(rng, ['compress', 'gzip', 'deflate', 'br', 'identity', 'x-unknown', 'gzip, gzip']);
  if (rng() < 0.05) headers.authorization = pick(rng, ['Bearer x', 'Basic abc', '']);
  const b = method === 'GET' || method === 'OPTIONS' ? undefined : body(rng);
  return { method, path, headers, ...(b === undefined ? {} : { body: b }) };
}

/** A request against the chaos proxy's Toxiproxy API; proxies created here point at `upstream`. */
export function chaosRequest(rng: Rng, upstream: string, names: string[]): FuzzRequest {
  const name = pick(rng, [...names, 'nope', '%2F', 'x'.repeat(300)]);
  const toxic = pick(rng, ['t0', 't1', 'latency_downstream', 'nope']);
  const type = pick(rng, ['latency', 'bandwidth', 'slow_close', 'timeout', 'reset_peer', 'slicer', 'limit_data', 'noop', 'down', 5, null]);
  const attr = () => pick(rng, [0, 1, 10, -1, 1.5, 2 ** 31, 3e9, '10', null, Number.MAX_SAFE_INTEGER]);
  const toxicBody = () => ({
    name: pick(rng, ['t0', 't1', undefined, '', 'x'.repeat(500)]),
    type,
    stream: pick(rng, ['upstream', 'downstream', 'UpStream', 'sideways', undefined]),
    toxicity: pick(rng, [undefined, 0, 0.5, 1, 2, -1, 'x']),
    attributes: pick(rng, [undefined, null, [], { latency: attr(), jitter: attr() }, { rate: attr() }, { timeout: attr() }, { delay: attr(), average_size: attr() }, { bytes: attr() }]),
  });
  const proxyBody = () => ({
    name: pick(rng, [...names, 'fz' + int(rng, 0, 3), '', 5]),
    listen: pick(rng, ['127.0.0.1:0', 'localhost:0', '', ':0', '0.0.0.0:0', '192.0.2.1:0', 'local373', '127.0.0.1:99999', undefined]),
    upstream: pick(rng, [upstream, upstream, '192.0.2.1:80', 'nohost', '', ':1', undefined]),
    enabled: pick(rng, [undefined, true, false, 'yes']),
  });
  const raw = () => pick(rng, ['', '{bad', 'null', '[]', '"x"', nest(int(rng, 10, 3000)), bytes(rng, 64)]);
  const r = pick(rng, [
    () => ({ method: 'GET', path: pick(rng, ['/proxies', '/version', '/health', '/metrics', `/proxies/${name}`, `/proxies/${name}/toxics`, `/proxies/${name}/toxics/${toxic}`, '/%zz', '/proxies/%E0%A4%A']) }),
    () => ({ method: 'POST', path: '/proxies', body: rng() < 0.8 ? JSON.stringify(proxyBody()) : raw() }),
    () => ({ method: pick(rng, ['POST', 'PATCH']), path: `/proxies/${name}`, body: rng() < 0.8 ? JSON.stringify({ enabled: pick(rng, [true, false]), upstream: pick(rng, [undefined, upstream, '192.0.2.1:1']) }) : raw() }),
    () => ({ method: 'POST', path: `/proxies/${name}/toxics`, body: rng() < 0.85 ? JSON.stringify(toxicBody()) : raw() }),
    () => ({ method: pick(rng, ['POST', 'PATCH']), path: `/proxies/${name}/toxics/${toxic}`, body: JSON.stringify({ toxicity: pick(rng, [0, 1, 3]), attributes: { latency: attr() } }) }),
    () => ({ method: 'DELETE', path: pick(rng, [`/proxies/${name}/toxics/${toxic}`, `/proxies/${name}`]) }),
    () => ({ method: 'POST', path: '/populate', body: rng() < 0.7 ? JSON.stringify([proxyBody(), proxyBody()]) : raw() }),
    () => ({ method: pick(rng, ['PUT', 'OPTIONS']), path: '/proxies' }),
    () => ({ method: 'GET', path: '/proxies', headers: { 'user-agent': 'Mozilla/5.0' } }),
  ])() as Omit<FuzzRequest, 'headers'> & { headers?: Record<string, string> };
  return { ...r, headers: r.headers ?? {} };
}

const ident = (stream: string) => JSON.stringify({ channel: '$pubsub', stream_name: stream });

/** One frame for the replay server (AnyCable extended protocol), legal or not. */
export function replayFrame(rng: Rng): string | Buffer {
  const s = pick(rng, ['s0', 's1', 's2', 'fuzz']);
  return pick(rng, [
    () => JSON.stringify({ command: 'subscribe', identifier: ident(s) }),
    () => JSON.stringify({ command: 'subscribe', identifier: ident(s), history: pick(rng, [{ since: 1 }, { since: 1e308 }, { streams: {} }, {}, null]) }),
    () => JSON.stringify({ command: 'unsubscribe', identifier: ident(s) }),
    () => JSON.stringify({ command: 'history', identifier: ident(s), history: pick(rng, [{ since: -1 }, { since: 'x' }, { streams: { [s]: { epoch: 'e', offset: 1e300 } } }, [], 5]) }),
    () => JSON.stringify({ command: 'whisper', identifier: ident(s), data: pick(rng, [{ a: 1 }, 'x', null]) }),
    () => JSON.stringify({ command: 'message', identifier: ident(s), data: '{}' }),
    () => JSON.stringify({ command: 'subscribe', identifier: pick(rng, ['not json', '', '[]', 'null', ident('x'.repeat(1025)), JSON.stringify({ channel: 'Chat', stream_name: 'a' }), JSON.stringify({ channel: '$pubsub', signed_stream_name: 'eA==--00' })]) }),
    () => JSON.stringify({ command: pick(rng, ['foo', '', '__proto__', 'Subscribe', 'ping', 'pong']), identifier: ident(s) }),
    () => JSON.stringify({ command: pick(rng, [1, null, ['subscribe'], {}]) }),
    () => pick(rng, ['{', '', ' ', 'null', '1e400', '"x"', '{"a":1}{"b":2}', nest(int(rng, 10, 3000))]),
    () => bytes(rng, int(rng, 1, 512)),
  ])();
}

/** One frame for the ws reference server. */
export function wsFrame(rng: Rng): string | Buffer {
  const stream = pick(rng, ['s0', 's1', 'fuzz', 'x'.repeat(1024), 'x'.repeat(1025), '']);
  return pick(rng, [
    () => JSON.stringify({ type: 'subscribe', stream: rng() < 0.9 ? `${stream}${int(rng, 0, 400)}` : stream }),
    () => JSON.stringify({ type: 'unsubscribe', stream }),
    () => JSON.stringify({ type: 'whisper', stream: pick(rng, ['s0', 's1']), data: pick(rng, ['x', 5, null, 'w'.repeat(int(rng, 0, 2000))]) }),
    () => JSON.stringify({ type: pick(rng, ['nope', 5, null, '__proto__']), stream }),
    () => JSON.stringify(pick(rng, [null, [], 1, 'x', { stream: 5 }])),
    () => pick(rng, ['{', '', nest(int(rng, 10, 3000)), deepObj(500)]),
    () => bytes(rng, int(rng, 1, 512)),
  ])();
}

/** One Socket.IO event (name and arguments) from a socket.io-client. */
export function ioEvent(rng: Rng): { event: string; args: unknown[] } {
  const stream = pick(rng, ['s0', 's1', 'fuzz', 'x'.repeat(1025), '']);
  const arg = () => pick(rng, [stream, `${stream}${int(rng, 0, 400)}`, 5, null, {}, [], { a: [1, 2] }, 'v'.repeat(int(rng, 0, 3000))]);
  return pick(rng, [
    () => ({ event: 'subscribe', args: [arg()] }),
    () => ({ event: 'join', args: [arg()] }),
    () => ({ event: 'unsubscribe', args: [arg()] }),
    () => ({ event: 'whisper', args: [pick(rng, ['s0', 's1', 5]), arg()] }),
    () => ({ event: pick(rng, ['nope', 'message', 'disconnecting', 'connect', 'error']), args: [arg(), arg()] }),
    () => ({ event: 'subscribe', args: ['w'.repeat(int(rng, 70_000, 90_000))] }),
  ])();
}

/** A raw Engine.IO/Socket.IO frame sent straight down the WebSocket (bypassing the client library). */
export function engineFrame(rng: Rng): string | Buffer {
  return pick(rng, [
    () => pick(rng, ['4', '40', '42', '42[', '42["subscribe"', '42[5]', '42["subscribe","s0",', '2', '3probe', '5', '6', '9', '', '4' + '2'.repeat(100)]),
    () => '42' + JSON.stringify(['join', pick(rng, ['s0', 5, null, { a: 1 }])]),
    () => '42' + nest(int(rng, 10, 2000)),
    () => bytes(rng, int(rng, 1, 256)),
  ])();
}
