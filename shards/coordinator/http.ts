/**
 * A JSON HTTP call to a shard, bounded in time; network failures come back as `error`, never
 * thrown. `snippet` is the body's first 200 characters, for messages when it is not the JSON we
 * expected.
 */
export async function callShard(url: string, opts: { method?: string; token?: string; timeoutMs: number }) {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  try {
    const res = await fetch(url, { method: opts.method ?? 'GET', headers, signal: AbortSignal.timeout(opts.timeoutMs) });
    const text = await res.text();
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
    return { status: 0, json: undefined, isJson: false, snippet: '', error: why };
  }
}

export const joinUrl = (base: string, path: string) => base.replace(/\/+$/, '') + path;
