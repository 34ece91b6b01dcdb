import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import { BROADCAST_LIMITS } from '../../services/common/broadcast.ts';
import type { PublishPayload } from '../targets/payload.ts';
import { broadcastPublish, type FunctionPublish, type PublishRequest, type TargetPublish } from '../targets/publish.ts';

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
  /**
   * How the target's server takes a message (its definition's `publish`, engine/targets/publish.ts).
   * @default broadcastPublish (`POST <url>/_broadcast`)
   */
  publish?: TargetPublish;
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
  const spec = opts.publish ?? broadcastPublish;
  const ctx = { url: opts.url, ...(opts.broadcastKey ? { broadcastKey: opts.broadcastKey } : {}) };
  const accepts = 'request' in spec ? spec.acceptStatus : undefined;
  const mayBeStored = (status: number, text: string): boolean => {
    if (!('request' in spec) || !spec.mayBeStored) return false;
    try {
      return spec.mayBeStored(status, text) === true;
    } catch {
      return false; // a throwing hook says nothing: the answer stands as a refusal
    }
  };
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
    const message = { stream: opts.stream, data: JSON.stringify(payload), seq: n, idempotencyKey: idempotencyKey(opts.runId, opts.stream, n) };
    inflight++;
    // A target's own hook may throw (a user's target file): that message fails with the hook's words, the run goes on.
    let req: PublishRequest | undefined;
    try {
      if ('request' in spec) req = spec.request(message, ctx);
    } catch (err) {
      return settleHookFault(n, 'publish.request() threw', err);
    }
    if (req) attempt(n, req, 0);
    else call(n, message, 0);
  };

  const settleHookFault = (n: number, cause: string, err: unknown) => {
    fail(n, cause, err instanceof Error ? err.message.slice(0, 200) : String(err).slice(0, 200));
    inflight--;
    finishIfIdle();
  };

  const fail = (n: number, cause: string, detail?: string, unknown = false) => {
    result.failed++;
    result.failureCauses[cause] = (result.failureCauses[cause] ?? 0) + 1;
    if (result.failures.length < 20) result.failures.push(`seq ${n}: ${cause}${detail && detail !== cause ? ` (${detail})` : ''}`);
    opts.onPublished?.(n, false, cause, undefined, unknown);
  };

  const accepted = (n: number, attemptSentAt: number) => {
    result.published++;
    opts.onPublished?.(n, true, undefined, { attemptSentAt, answeredAt: Date.now() });
  };

  /** A function publish (FunctionPublish): resolved is accepted; a timeout is retried with the same key, as an HTTP timeout is. */
  const call = (n: number, message: Parameters<FunctionPublish['send']>[0], tries: number) => {
    const attemptSentAt = Date.now();
    const timeoutMs = opts.timeoutMs ?? 10_000;
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
    const sent = Promise.resolve()
      .then(() => (spec as FunctionPublish).send(message, { ...ctx, signal: abort.signal }))
      .then(() => 'ok' as const);
    void Promise.race([sent, timedOut]).then(
      (outcome) => {
        clearTimeout(timer);
        opts.onAttempt?.(n, { status: outcome === 'ok' ? 'ok' : 'TIMEOUT', answerMs: Date.now() - attemptSentAt });
        if (outcome === 'ok') {
          accepted(n, attemptSentAt);
        } else {
          abort.abort();
          if (tries < retries && !stopped) {
            result.retried = (result.retried ?? 0) + 1;
            setTimeout(() => call(n, message, tries + 1), 100 * (tries + 1)).unref();
            return;
          }
          fail(n, 'TIMEOUT', `publish.send() did not settle within ${timeoutMs} ms`, true);
        }
        inflight--;
        finishIfIdle();
      },
      (err: unknown) => {
        clearTimeout(timer);
        const code = (err as { code?: unknown } | null)?.code;
        const cause = typeof code === 'string' && code.length <= 64 ? code : 'publish.send() rejected';
        opts.onAttempt?.(n, { status: cause, answerMs: Date.now() - attemptSentAt });
        fail(n, cause, err instanceof Error ? err.message.slice(0, 200) : String(err).slice(0, 200));
        inflight--;
        finishIfIdle();
      },
    );
  };

  const attempt = (n: number, req: PublishRequest, tries: number, unknown = false) => {
    const body = req?.body;
    // Outcome unknown (timed out, or the target says it may have stored it): the same request
    // again, same key, after a short back-off; a target honouring the key answers as the first.
    const retryOr = (cause: string, detail?: string) => {
      unknown = true;
      if (tries < retries && !stopped) {
        result.retried = (result.retried ?? 0) + 1;
        setTimeout(() => attempt(n, req, tries + 1, true), 100 * (tries + 1)).unref();
        return;
      }
      fail(n, cause, detail, unknown);
      inflight--;
      finishIfIdle();
    };
    const attemptSentAt = Date.now();
    let http: ReturnType<typeof request>;
    try {
      // A target file's request (an unparsable URL, a header Node refuses) fails its message, not the run.
      if (typeof req?.url !== 'string' || typeof body !== 'string') throw new Error('expected { url: string, body: string }');
      if (new URL(req.url).protocol !== 'http:') throw new Error(`publish requests go over http: (got ${JSON.stringify(req.url.slice(0, 100))})`);
      http = request(req.url, { method: req.method ?? 'POST', agent, timeout: opts.timeoutMs ?? 10_000, headers: { ...req.headers, 'content-length': Buffer.byteLength(body) } });
    } catch (err) {
      return settleHookFault(n, 'publish.request() built a bad request', err);
    }
    let writtenAt = 0;
    http.on('finish', () => (writtenAt = Date.now()));
    const answered = (status: number | string) => opts.onAttempt?.(n, { status, answerMs: writtenAt ? Date.now() - writtenAt : 0 });
    const ok = (status: number | undefined) => (status === undefined ? false : accepts ? accepts.includes(status) : status >= 200 && status < 300);
    http.on('response', (res) => {
      answered(res.statusCode ?? 0);
      let text = '';
      if (ok(res.statusCode)) res.resume();
      else res.on('data', (d: Buffer) => void (text.length < 4096 && (text += d.toString())));
      res.on('end', () => {
        if (ok(res.statusCode)) accepted(n, attemptSentAt);
        else if (mayBeStored(res.statusCode ?? 0, text)) return retryOr(`HTTP ${res.statusCode}`, 'may have been stored');
        else fail(n, `HTTP ${res.statusCode}`, undefined, unknown);
        inflight--;
        finishIfIdle();
      });
    });
    http.on('timeout', () => http.destroy(Object.assign(new Error(`no answer within ${opts.timeoutMs ?? 10_000} ms`), { code: 'TIMEOUT' })));
    http.on('error', (err) => {
      // The error's code when it has one (stable across Node versions), else its message.
      const cause = (err as NodeJS.ErrnoException).code ?? err.message;
      answered(cause);
      if (cause === 'TIMEOUT') return retryOr(cause, err.message);
      // Written in full and then cut off: the target may have stored it before the cut.
      if (writtenAt) unknown = true;
      fail(n, cause, err.message, unknown);
      inflight--;
      finishIfIdle();
    });
    http.end(body);
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
