import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import { BROADCAST_LIMITS } from '../../services/common/broadcast.ts';
import type { PublishPayload } from '../targets/payload.ts';
import { broadcastPublish, type FunctionPublish, type PublishContext, type PublishMessage, type PublishRequest, type TargetPublish } from '../targets/publish.ts';

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

/** How one message's publish ended: accepted (when its accepted attempt went out, and was answered), or failed and why. */
export type PublishOutcome =
  | { ok: true; attemptSentAt: number; answeredAt: number }
  /** `unknown`: some attempt may have been stored (it timed out, was answered "may have been stored", or lost its connection after the request was written). */
  | { ok: false; cause: string; detail?: string; unknown: boolean };

export interface MessageSenderOptions extends Pick<PublisherOptions, 'publish' | 'broadcastKey' | 'timeoutMs' | 'retries' | 'onAttempt'> {
  /** The keep-alive pool requests go out on (its maxSockets is the caller's concurrency). */
  agent: Agent;
  /** True once the caller stops: a message then gets no further retry. */
  stopped?: () => boolean;
  /** A retry went out (same request, same idempotency key). */
  onRetry?: () => void;
}

const hookWords = (err: unknown) => (err instanceof Error ? err.message.slice(0, 200) : String(err).slice(0, 200));

/**
 * The one path a message takes to a target's server: its definition's `publish` (an HTTP request
 * it builds, or a function; default broadcastPublish), retried with the same idempotency key when
 * the outcome is unknown (a timeout, a "may have been stored" answer). `url` is the base URL the
 * target's hook builds on (PublishContext.url). startPublisher's schedule and capacity's batch
 * publisher (for a target whose server takes no `/_broadcast` arrays) both send through it.
 */
export function messageSender(o: MessageSenderOptions): (url: string, message: PublishMessage | readonly PublishMessage[], done: (r: PublishOutcome) => void) => void {
  const spec = o.publish ?? broadcastPublish;
  const accepts = 'request' in spec ? spec.acceptStatus : undefined;
  const timeoutMs = o.timeoutMs ?? 10_000;
  const retries = Math.max(0, o.retries ?? 2);
  const stopped = () => o.stopped?.() === true;
  const mayBeStored = (status: number, text: string): boolean => {
    if (!('request' in spec) || !spec.mayBeStored) return false;
    try {
      return spec.mayBeStored(status, text) === true;
    } catch {
      return false; // a throwing hook says nothing: the answer stands as a refusal
    }
  };
  const retry = (again: () => void, tries: number) => {
    o.onRetry?.();
    setTimeout(again, 100 * (tries + 1)).unref();
  };

  /** A function publish (FunctionPublish): resolved is accepted; a timeout is retried with the same key, as an HTTP timeout is. */
  const call = (ctx: PublishContext, messages: PublishMessage | readonly PublishMessage[], done: (r: PublishOutcome) => void, tries: number) => {
    const attemptSentAt = Date.now();
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
    const fn = spec as FunctionPublish;
    const many = Array.isArray(messages) ? (messages as readonly PublishMessage[]) : undefined;
    const message = many ? many[0]! : (messages as PublishMessage);
    const sent = Promise.resolve()
      .then(() => (many && many.length > 1 && fn.sendBatch ? fn.sendBatch(many, { ...ctx, signal: abort.signal }) : fn.send(message, { ...ctx, signal: abort.signal })))
      .then(() => 'ok' as const);
    void Promise.race([sent, timedOut]).then(
      (outcome) => {
        clearTimeout(timer);
        o.onAttempt?.(message.seq, { status: outcome === 'ok' ? 'ok' : 'TIMEOUT', answerMs: Date.now() - attemptSentAt });
        if (outcome === 'ok') return done({ ok: true, attemptSentAt, answeredAt: Date.now() });
        abort.abort();
        if (tries < retries && !stopped()) return retry(() => call(ctx, messages, done, tries + 1), tries);
        done({ ok: false, cause: 'TIMEOUT', detail: `publish.send() did not settle within ${timeoutMs} ms`, unknown: true });
      },
      (err: unknown) => {
        clearTimeout(timer);
        const code = (err as { code?: unknown } | null)?.code;
        const cause = typeof code === 'string' && code.length <= 64 ? code : 'publish.send() rejected';
        o.onAttempt?.(message.seq, { status: cause, answerMs: Date.now() - attemptSentAt });
        // The hook says the request may have reached the server (a connection cut after sending): the outcome is unknown, not a refusal.
        done({ ok: false, cause, detail: hookWords(err), unknown: (err as { mayBeStored?: unknown } | null)?.mayBeStored === true });
      },
    );
  };

  const attempt = (n: number, req: PublishRequest, done: (r: PublishOutcome) => void, tries: number, unknown = false) => {
    const body = req?.body;
    // Outcome unknown (timed out, or the target says it may have stored it): the same request
    // again, same key, after a short back-off; a target honouring the key answers as the first.
    const retryOr = (cause: string, detail?: string) => {
      if (tries < retries && !stopped()) return retry(() => attempt(n, req, done, tries + 1, true), tries);
      done({ ok: false, cause, ...(detail ? { detail } : {}), unknown: true });
    };
    const attemptSentAt = Date.now();
    let http: ReturnType<typeof request>;
    try {
      // A target file's request (an unparsable URL, a header Node refuses) fails its message, not the run.
      if (typeof req?.url !== 'string' || typeof body !== 'string') throw new Error('expected { url: string, body: string }');
      if (new URL(req.url).protocol !== 'http:') throw new Error(`publish requests go over http: (got ${JSON.stringify(req.url.slice(0, 100))})`);
      http = request(req.url, { method: req.method ?? 'POST', agent: o.agent, timeout: timeoutMs, headers: { ...req.headers, 'content-length': Buffer.byteLength(body) } });
    } catch (err) {
      return done({ ok: false, cause: 'publish.request() built a bad request', detail: hookWords(err), unknown: false });
    }
    let writtenAt = 0;
    http.on('finish', () => (writtenAt = Date.now()));
    // Connected: the request was handed to the socket at once (end() below), so a reset from here
    // on may come after the target stored it. 'finish' alone can come too late: a write's
    // completion and a killed target's reset can land in one turn of a busy loop, the reset first
    // (a soak's killed server delivered a message its publish booked as plainly failed).
    let connected = false;
    http.on('socket', (sock) => (sock.connecting ? sock.once('connect', () => (connected = true)) : (connected = true)));
    const answered = (status: number | string) => o.onAttempt?.(n, { status, answerMs: writtenAt ? Date.now() - writtenAt : 0 });
    const ok = (status: number | undefined) => (status === undefined ? false : accepts ? accepts.includes(status) : status >= 200 && status < 300);
    http.on('response', (res) => {
      answered(res.statusCode ?? 0);
      let text = '';
      if (ok(res.statusCode)) res.resume();
      else res.on('data', (d: Buffer) => void (text.length < 4096 && (text += d.toString())));
      res.on('end', () => {
        if (ok(res.statusCode)) done({ ok: true, attemptSentAt, answeredAt: Date.now() });
        else if (mayBeStored(res.statusCode ?? 0, text)) retryOr(`HTTP ${res.statusCode}`, 'may have been stored');
        else done({ ok: false, cause: `HTTP ${res.statusCode}`, unknown });
      });
    });
    http.on('timeout', () => http.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'TIMEOUT' })));
    http.on('error', (err) => {
      // The error's code when it has one (stable across Node versions), else its message.
      const cause = (err as NodeJS.ErrnoException).code ?? err.message;
      answered(cause);
      if (cause === 'TIMEOUT') return retryOr(cause, err.message);
      // Written (or handed to a connected socket) and then cut off: the target may have stored it before the cut.
      done({ ok: false, cause, detail: err.message, unknown: unknown || writtenAt > 0 || connected });
    });
    http.end(body);
  };

  return (url, messages, done) => {
    const ctx: PublishContext = { url, ...(o.broadcastKey ? { broadcastKey: o.broadcastKey } : {}) };
    // Several at once only through a function publish's sendBatch (capacity's batch publisher checks before it builds one).
    if (Array.isArray(messages)) {
      if ('request' in spec || (messages.length > 1 && !spec.sendBatch)) return done({ ok: false, cause: 'RR_ERR_INTERNAL', detail: 'a batch needs a function publish with sendBatch', unknown: false });
      return call(ctx, messages, done, 0);
    }
    const message = messages as PublishMessage;
    // A target's own hook may throw (a user's target file): that message fails with the hook's words, the run goes on.
    let req: PublishRequest | undefined;
    try {
      if ('request' in spec) req = spec.request(message, ctx);
    } catch (err) {
      return done({ ok: false, cause: 'publish.request() threw', detail: hookWords(err), unknown: false });
    }
    if (req) attempt(message.seq, req, done, 0);
    else call(ctx, message, done, 0);
  };
}

/**
 * Publishes seq 1..M through the target's `publish` (messageSender; default `POST /_broadcast`) on
 * a drift-free schedule (start + k·interval), each as its own request like the benchmark's publisher. `sentAt` is stamped when a message is due.
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
  const sender = messageSender({ ...opts, agent, stopped: () => stopped, onRetry: () => (result.retried = (result.retried ?? 0) + 1) });

  const finishIfIdle = () => {
    if ((seq >= opts.messages || stopped) && inflight === 0) {
      result.elapsedMs = Date.now() - t0;
      agent.destroy();
      resolveDone(result);
    }
  };

  const settled = (n: number, r: PublishOutcome) => {
    if (r.ok) {
      result.published++;
      opts.onPublished?.(n, true, undefined, { attemptSentAt: r.attemptSentAt, answeredAt: r.answeredAt });
    } else {
      result.failed++;
      result.failureCauses[r.cause] = (result.failureCauses[r.cause] ?? 0) + 1;
      if (result.failures.length < 20) result.failures.push(`seq ${n}: ${r.cause}${r.detail && r.detail !== r.cause ? ` (${r.detail})` : ''}`);
      opts.onPublished?.(n, false, r.cause, undefined, r.unknown);
    }
    inflight--;
    finishIfIdle();
  };

  const send = (n: number) => {
    const payload: PublishPayload = { seq: n, sentAt: Date.now(), runId: opts.runId, ...(pad ? { pad } : {}) };
    opts.onSend?.(n, payload.sentAt);
    inflight++;
    sender(opts.url, { stream: opts.stream, data: JSON.stringify(payload), seq: n, idempotencyKey: idempotencyKey(opts.runId, opts.stream, n) }, (r) => settled(n, r));
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
