import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import { BROADCAST_LIMITS } from '../../services/common/broadcast.ts';
import type { PublishPayload } from '../targets/payload.ts';

/**
 * The `Idempotency-Key` of message `seq`: `<runId>:<stream>:<seq>`. A header carries Latin-1 at
 * most (Node refuses anything else: "Invalid character in header content"), and a stream name
 * may be any text the target takes (`✓`, `комната`), so the stream part is percent-encoded
 * (UTF-8 bytes) outside printable ASCII, `%` and `#` included so two names never share a key. A key
 * longer than the targets accept (BROADCAST_LIMITS: 256; runId 128 + stream 256 can pass it)
 * names the stream by a hash instead: still one key per stream, seq and run.
 */
export function idempotencyKey(runId: string, stream: string, seq: number): string {
  const part = stream.replace(/[^\x21\x22\x24\x26-\x7e]/gu, (c) => [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
  const key = `${runId}:${part}:${seq}`;
  if (key.length <= BROADCAST_LIMITS.maxIdempotencyKeyLength) return key;
  return `${runId.slice(0, 96)}:#${createHash('sha256').update(stream).update('\0').update(runId).digest('base64url')}:${seq}`;
}

export interface PublisherOptions {
  /** Service base URL (messages go to `${url}/_broadcast`) or the full broadcast endpoint when it ends in `/_broadcast`. */
  url: string;
  stream: string;
  runId: string;
  /** Last sequence number to publish. */
  messages: number;
  intervalMs: number;
  /** First sequence number (a restarted publisher resumes where its schedule is). @default 1 */
  firstSeq?: number;
  /** Filler characters added to each payload. @default 0 */
  payloadBytes?: number;
  broadcastKey?: string;
  /** Per-request timeout. @default 10000 */
  timeoutMs?: number;
  /**
   * Keep-alive connections requests may use at once. 1 (the default) keeps publish order; more
   * is the benchmark's `pool` publisher: a message goes out on the next free connection without
   * waiting for earlier answers, so throughput rises and order across connections is not promised
   * (the ledger counts what reorders). @default 1
   */
  concurrency?: number;
  /**
   * Retries of a publish that timed out or got a 503 saying it "may have been stored", with the
   * same body and `Idempotency-Key` (`<runId>:<stream>:<seq>`, see idempotencyKey), so a target that honours the key
   * (the replay server) stores it once: a stall is neither a loss nor a duplicate. @default 2
   */
  retries?: number;
  /** Called as each request goes out, with the `sentAt` written into its payload. */
  onSend?: (seq: number, sentAt: number) => void;
  /**
   * Called after every attempt (retries included) with its answer: the HTTP status or the error
   * code, and the ms from the request being fully written to that answer (queueing behind an
   * earlier request on the one connection excluded): how long the target took to answer.
   */
  onAttempt?: (seq: number, answer: { status: number | string; answerMs: number }) => void;
  /**
   * Called once per message when its outcome is known: `ok` means the target answered 201 (the
   * message was accepted and counts towards expected deliveries); otherwise `cause` says why.
   * `at` (on a 201): when the attempt that got it was sent (a retry's own time) and answered, so a
   * runner can place the message before or after a broker restart (epoch-book.ts).
   * `unknown` (on a failure): some attempt may have been stored (it timed out, was answered "may
   * have been stored", or lost its connection after the request was written).
   */
  onPublished?: (seq: number, ok: boolean, cause?: string, at?: { attemptSentAt: number; answeredAt: number }, unknown?: boolean) => void;
}

/** How the publisher fared. Failures are the publisher's or the target's refusal, never delivery loss. */
export interface PublisherResult {
  /** Messages the target accepted (HTTP 201). */
  published: number;
  /** Messages not accepted: refused (non-201) or never answered (network error, timeout). */
  failed: number;
  /** `failed` by cause: `HTTP <status>` for a refusal, the error code (ECONNREFUSED, ECONNRESET, TIMEOUT...) otherwise. */
  failureCauses: Record<string, number>;
  /** The first 20 failures, `seq <n>: <cause>[ (<message>)]`. */
  failures: string[];
  /** Requests sent again after a timeout or a "may have been stored" 503 (same idempotency key). */
  retried?: number;
  elapsedMs: number;
}

/**
 * Publishes seq 1..M to `/_broadcast` on a drift-free schedule (start + k·interval), each as its
 * own request like the benchmark's publisher. `sentAt` is stamped when a message is due.
 *
 * One keep-alive connection, so the target receives messages in publish order: with several,
 * one slow request lets the next overtake it and every client sees an out-of-order pair that the
 * publisher caused. A slow response queues the next message (its latency then includes the wait)
 * rather than reordering it. Intervals near the server's keep-alive timeout (Node: 5 s) would race
 * an idle close ("socket hang up"), so long intervals use a fresh connection per message.
 * `concurrency` > 1 trades that order for throughput (a pool of always-kept-alive connections).
 */
export function startPublisher(opts: PublisherOptions): { done: Promise<PublisherResult>; stop(): void } {
  const concurrency = Math.max(1, opts.concurrency ?? 1);
  const agent = new Agent({ keepAlive: concurrency > 1 || opts.intervalMs < 4000, maxSockets: concurrency });
  const target = /\/_broadcast\/?$/.test(new URL(opts.url).pathname) ? new URL(opts.url) : new URL('/_broadcast', opts.url);
  const result: PublisherResult = { published: 0, failed: 0, failureCauses: {}, failures: [], retried: 0, elapsedMs: 0 };
  const t0 = Date.now();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inflight = 0;
  let resolveDone!: (r: PublisherResult) => void;
  const done = new Promise<PublisherResult>((r) => (resolveDone = r));
  const seq0 = (opts.firstSeq ?? 1) - 1;
  let seq = seq0;
  const pad = 'x'.repeat(opts.payloadBytes ?? 0);

  const finishIfIdle = () => {
    if ((seq >= opts.messages || stopped) && inflight === 0) {
      result.elapsedMs = Date.now() - t0;
      agent.destroy();
      resolveDone(result);
    }
  };

  const retries = Math.max(0, opts.retries ?? 2);
  const send = (n: number) => {
    const payload: PublishPayload = { seq: n, sentAt: Date.now(), runId: opts.runId, ...(pad ? { pad } : {}) };
    opts.onSend?.(n, payload.sentAt);
    const body = JSON.stringify({ stream: opts.stream, data: JSON.stringify(payload) });
    inflight++;
    attempt(n, body, 0);
  };

  const attempt = (n: number, body: string, tries: number, unknown = false) => {
    // Outcome unknown (timed out, or the target says it may have stored it): the same request
    // again, same key, after a short back-off; a target honouring the key answers as the first.
    const retryOr = (cause: string, detail?: string) => {
      unknown = true;
      if (tries < retries && !stopped) {
        result.retried = (result.retried ?? 0) + 1;
        setTimeout(() => attempt(n, body, tries + 1, true), 100 * (tries + 1)).unref();
        return;
      }
      fail(cause, detail);
      inflight--;
      finishIfIdle();
    };
    const fail = (cause: string, detail?: string) => {
      result.failed++;
      result.failureCauses[cause] = (result.failureCauses[cause] ?? 0) + 1;
      if (result.failures.length < 20) result.failures.push(`seq ${n}: ${cause}${detail && detail !== cause ? ` (${detail})` : ''}`);
      opts.onPublished?.(n, false, cause, undefined, unknown);
    };
    const attemptSentAt = Date.now();
    const req = request(target, {
      method: 'POST',
      agent,
      timeout: opts.timeoutMs ?? 10_000,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'idempotency-key': idempotencyKey(opts.runId, opts.stream, n), ...(opts.broadcastKey ? { authorization: `Bearer ${opts.broadcastKey}` } : {}) },
    });
    let writtenAt = 0;
    req.on('finish', () => (writtenAt = Date.now()));
    const answered = (status: number | string) => opts.onAttempt?.(n, { status, answerMs: writtenAt ? Date.now() - writtenAt : 0 });
    req.on('response', (res) => {
      answered(res.statusCode ?? 0);
      let text = '';
      if (res.statusCode === 201) res.resume();
      else res.on('data', (d: Buffer) => void (text.length < 4096 && (text += d.toString())));
      res.on('end', () => {
        if (res.statusCode === 201) {
          result.published++;
          opts.onPublished?.(n, true, undefined, { attemptSentAt, answeredAt: Date.now() });
        } else if (res.statusCode === 503 && /may have been stored/.test(text)) return retryOr(`HTTP 503`, 'may have been stored');
        else fail(`HTTP ${res.statusCode}`);
        inflight--;
        finishIfIdle();
      });
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${opts.timeoutMs ?? 10_000} ms`), { code: 'TIMEOUT' })));
    req.on('error', (err) => {
      // The error's code when it has one (stable across Node versions), else its message.
      const cause = (err as NodeJS.ErrnoException).code ?? err.message;
      answered(cause);
      if (cause === 'TIMEOUT') return retryOr(cause, err.message);
      // Written in full and then cut off: the target may have stored it before the cut.
      if (writtenAt) unknown = true;
      fail(cause, err.message);
      inflight--;
      finishIfIdle();
    });
    req.end(body);
  };

  // Message seq0+k+1 is due at t0 + k·interval. Everything already due goes out now, so a late
  // timer does not lower the rate; beyond `concurrency` requests the agent queues them in order.
  const dueAt = () => t0 + (seq - seq0) * opts.intervalMs;
  const tick = () => {
    while (!stopped && seq < opts.messages && dueAt() <= Date.now()) send(++seq);
    if (!stopped && seq < opts.messages) timer = setTimeout(tick, Math.max(0, dueAt() - Date.now()));
    else finishIfIdle();
  };
  tick();
  return {
    done,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      finishIfIdle();
    },
  };
}
