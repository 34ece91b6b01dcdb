/**
 * How a target's server takes a message to publish. Every run's publisher (engine/measure/
 * publisher.ts) goes through one of these; a target that declares none publishes the way Rebound's
 * own servers and anycable-go do (`broadcastPublish`).
 */

/** One message the run publishes: `data` is the text every subscriber must receive unchanged. */
export interface PublishMessage {
  stream: string;
  /** The run's payload (JSON text carrying seq, sentAt, runId): deliver it byte for byte. */
  data: string;
  seq: number;
  /** `<runId>:<stream>:<seq>`, Latin-1 and at most 256 characters: the same on every retry of this message. */
  idempotencyKey: string;
}

/** Where the run publishes: the target's base URL (or `--broadcast-url` when given) and the bearer key, if any. */
export interface PublishContext {
  url: string;
  broadcastKey?: string;
}

/** The HTTP request a target builds for one message; the runner sends it on its keep-alive pool. */
export interface PublishRequest {
  url: string;
  /** @default 'POST' */
  method?: 'POST' | 'PUT';
  headers?: Record<string, string>;
  body: string;
}

/** A target's server publishes through an HTTP request the target builds for each message. */
export interface RequestPublish {
  request(m: PublishMessage, ctx: PublishContext): PublishRequest;
  /** Statuses that mean "accepted": the message counts towards expected deliveries. @default any 2xx */
  acceptStatus?: readonly number[];
  /**
   * An answer saying the server may have stored the message anyway (a storage timeout): the
   * runner sends the same request again (same idempotency key) instead of failing it. @default never
   */
  mayBeStored?(status: number, body: string): boolean;
}

/**
 * A target's server publishes through a function (an official server SDK, a queue): resolved
 * means accepted, a rejection is a refused message (its `code`, else its message, is the cause).
 * A rejection whose error has `mayBeStored: true` (the connection broke after the request went
 * out) is booked as failed with an unknown outcome, not retried: the function knows whether its
 * server would store a second copy. The runner races it against its per-request timeout and
 * retries a timed-out call with the same idempotency key.
 */
export interface FunctionPublish {
  send(m: PublishMessage, ctx: PublishContext & { signal: AbortSignal }): Promise<void>;
  /**
   * Several messages in one call (a server's batch API, e.g. Pusher's `batch_events`), all or
   * nothing like `send`. Capacity's batch publisher uses it at thousands of messages a second,
   * never with two messages of one stream in a call (so a server that handles a batch's events
   * concurrently cannot reorder a stream). Optional: without it every message is its own `send`.
   */
  sendBatch?(ms: readonly PublishMessage[], ctx: PublishContext & { signal: AbortSignal }): Promise<void>;
  /** The most messages one `sendBatch` call takes (Pusher: 10). @default 10 */
  maxBatch?: number;
}

export type TargetPublish = RequestPublish | FunctionPublish;

/** The broadcast endpoint for `url`: `url` itself when it already ends in `/_broadcast`, else `<url>/_broadcast`. */
export function broadcastEndpoint(url: string): string {
  const u = new URL(url);
  return (/\/_broadcast\/?$/.test(u.pathname) ? u : new URL('/_broadcast', u)).toString();
}

/**
 * Rebound's own servers and anycable-go: `POST <url>/_broadcast` with `{"stream","data"}`, the
 * key as `Idempotency-Key`, `Authorization: Bearer <key>` when a broadcast key is set; 201 is
 * accepted, a 503 that says the message "may have been stored" is retried.
 */
export const broadcastPublish: RequestPublish = {
  request: (m, ctx) => ({
    url: broadcastEndpoint(ctx.url),
    headers: { 'content-type': 'application/json', 'idempotency-key': m.idempotencyKey, ...(ctx.broadcastKey ? { authorization: `Bearer ${ctx.broadcastKey}` } : {}) },
    body: JSON.stringify({ stream: m.stream, data: m.data }),
  }),
  acceptStatus: [201],
  mayBeStored: (status, body) => status === 503 && /may have been stored/.test(body),
};
