import { Agent, request } from 'node:http';
import { failureCause, type PublishPayload, type PublisherResult } from '../core/publisher.ts';

export interface PoolPublisherOptions {
  url: string;
  stream: string;
  runId: string;
  messages: number;
  intervalMs: number;
  concurrency: number;
  payloadBytes?: number;
  broadcastKey?: string;
  timeoutMs?: number;
  onSend?: (seq: number, sentAt: number) => void;
  /** As in runners/core/publisher.ts: `ok` when the target answered 201 (the ledger then expects it), else why not. */
  onPublished?: (seq: number, ok: boolean, cause?: string) => void;
}

/**
 * The benchmark's `pool` publisher: message k is due at start + k·interval and goes out on the
 * next free connection of a keep-alive pool, without waiting for earlier responses. Throughput
 * is the point; order across connections is not promised (the ledger counts what reorders).
 */
export function startPoolPublisher(o: PoolPublisherOptions): { done: Promise<PublisherResult>; stop(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: o.concurrency });
  const target = /\/_broadcast\/?$/.test(new URL(o.url).pathname) ? new URL(o.url) : new URL('/_broadcast', o.url);
  const result: PublisherResult = { published: 0, failed: 0, failureCauses: {}, failures: [], elapsedMs: 0 };
  const t0 = Date.now();
  const pad = 'x'.repeat(o.payloadBytes ?? 0);
  let seq = 0;
  let settled = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let resolveDone!: (r: PublisherResult) => void;
  const done = new Promise<PublisherResult>((r) => (resolveDone = r));
  const finish = () => {
    if (settled < seq || (!stopped && seq < o.messages)) return;
    result.elapsedMs = Date.now() - t0;
    agent.destroy();
    resolveDone(result);
  };
  const send = (n: number) => {
    const payload: PublishPayload = { seq: n, sentAt: Date.now(), runId: o.runId, ...(pad ? { pad } : {}) };
    o.onSend?.(n, payload.sentAt);
    const body = JSON.stringify({ stream: o.stream, data: JSON.stringify(payload) });
    const req = request(target, { method: 'POST', agent, timeout: o.timeoutMs ?? 10_000, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(o.broadcastKey ? { authorization: `Bearer ${o.broadcastKey}` } : {}) } });
    const end = (ok: boolean, cause?: string) => {
      if (ok) result.published++;
      else {
        result.failed++;
        result.failureCauses[cause ?? 'unknown'] = (result.failureCauses[cause ?? 'unknown'] ?? 0) + 1;
        if (result.failures.length < 20) result.failures.push(`seq ${n}: ${cause}`);
      }
      o.onPublished?.(n, ok, cause);
      settled++;
      finish();
    };
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => end(res.statusCode === 201, `HTTP ${res.statusCode}`));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => end(false, failureCause(err)));
    req.end(body);
  };
  const tick = () => {
    // Everything already due goes out now (a late timer must not lower the rate).
    while (!stopped && seq < o.messages && t0 + seq * o.intervalMs <= Date.now()) send(++seq);
    if (!stopped && seq < o.messages) timer = setTimeout(tick, Math.max(0, t0 + seq * o.intervalMs - Date.now()));
    else finish();
  };
  tick();
  return {
    done,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      finish();
    },
  };
}
