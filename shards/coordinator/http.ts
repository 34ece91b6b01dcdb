import { COORD_OPTIONS } from './options.ts';
import { safeText } from '../../lib/escape.ts';

export interface ShardAnswer {
  status: number;
  json: unknown;
  isJson: boolean;
  snippet: string;
  /** The shard could not be reached or did not answer in time (worth retrying while polling). */
  error?: string;
  /**
   * The shard answered in a way that is never retried: a redirect (the coordinator talks only to
   * the URLs in SHARDS) or a body over the byte cap. The shard is excluded with this reason.
   */
  refused?: string;
}

/**
 * A JSON HTTP call to a shard, bounded in time and in bytes; failures come back as `error` or
 * `refused`, never thrown. Redirects are not followed: a 3xx would let a shard hand its job to a
 * host outside SHARDS. The body is read as a stream and the read stops at `maxBytes`, so a
 * shard cannot make the coordinator hold an answer of any size. `snippet` is the body's first
 * 200 characters, for messages when it is not the JSON we expected.
 */
export async function callShard(url: string, opts: { method?: string; token?: string; timeoutMs: number; maxBytes?: number }): Promise<ShardAnswer> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const maxBytes = opts.maxBytes ?? COORD_OPTIONS.maxResponseBytes.default;
  const ctl = new AbortController();
  const none = { json: undefined, isJson: false, snippet: '' };
  try {
    const res = await fetch(url, { method: opts.method ?? 'GET', headers, redirect: 'manual', signal: AbortSignal.any([ctl.signal, AbortSignal.timeout(opts.timeoutMs)]) });
    if (res.status >= 300 && res.status <= 399) {
      ctl.abort();
      const to = res.headers.get('location');
      return { status: res.status, ...none, refused: `answered ${res.status} redirecting to ${to === null ? '(no Location)' : safeText(JSON.stringify(to.slice(0, 200)))}: the coordinator follows no redirects (only the SHARDS URLs are trusted)` };
    }
    const body = await readCapped(res, maxBytes);
    if (body === undefined) {
      ctl.abort();
      return { status: res.status, ...none, refused: `answered more than ${maxBytes} bytes (SHARD_MAX_RESPONSE_BYTES / --max-response-bytes); read stopped there` };
    }
    const text = new TextDecoder().decode(body);
    let json: unknown = undefined;
    let isJson = false;
    try {
      json = JSON.parse(text);
      isJson = true;
    } catch {
      /* an HTML page or a proxy's error: reported through `snippet` */
    }
    return { status: res.status, json, isJson, snippet: text.slice(0, 200) };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const why = e.name === 'TimeoutError' ? `no answer in ${opts.timeoutMs} ms` : (e.cause?.code ?? e.message);
    return { status: 0, ...none, error: why };
  }
}

/** The body's bytes, or undefined as soon as it passes `maxBytes` (a Content-Length over it is refused unread). */
async function readCapped(res: Response, maxBytes: number): Promise<Uint8Array | undefined> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) return undefined;
  if (!res.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

export const joinUrl = (base: string, path: string) => base.replace(/\/+$/, '') + path;
