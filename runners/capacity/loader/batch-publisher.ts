import { Agent, request } from 'node:http';
import { idempotencyKey, messageSender } from '../../../engine/measure/publisher.ts';
import type { PublishPayload } from '../../../engine/targets/payload.ts';
import { broadcastPublish, type PublishMessage, type TargetPublish } from '../../../engine/targets/publish.ts';
import type { StepKey } from './messages.ts';

/**
 * Publishes to many sequence spaces at one total rate: every `tickMs` the messages now due go out
 * as one `/_broadcast` array (all-or-nothing on every target: a 201 accepts the whole batch),
 * round-robin over the keys, batches round-robin over the nodes. engine/measure/publisher.ts sends
 * one request per message on one stream; at thousands of messages a second over 1,000 streams
 * that measures the HTTP hop, not the fan-out, and the publisher would be the rig's limit.
 *
 * Up to `maxInFlight` batches per node are in flight on their own keep-alive connections, so the
 * target finds the next batch waiting when it finishes one instead of idling for a round trip
 * through the publisher (on shared cores that trip includes waiting for the publisher to be
 * scheduled). Order per key still holds: a batch that shares a key with one in flight waits,
 * and batches leave strictly in the order they were built, so a key's messages can never be
 * reordered. A waiting batch's latency includes the wait (its `sentAt` is when it was due).
 *
 * A target that declares its own `publish` (a user's target file: its server takes no
 * `/_broadcast` array) gets each message as its own request through that declaration
 * (messageSender, the publisher's one send path), under the same per-key order and in-flight bound;
 * a function publish with `sendBatch` (Pusher's batch_events) gets up to its `maxBatch` messages
 * per call, never two of one stream: one signed request per message held soketi's S3 at a 158 ms
 * p50 at 1,000 messages/s, all of it waiting here behind 4 requests in flight.
 */
export interface BatchPublisherOptions {
  urls: string[];
  keys: readonly (StepKey & { streamName: string })[];
  ratePerSec: number;
  durationMs: number;
  tickMs: number;
  payloadBytes?: number;
  /** Batches in flight per node at most (1 = one connection, each batch waits for the last answer). @default 4 */
  maxInFlight?: number;
  /** How the target's server takes a message (its definition's `publish`). @default broadcastPublish: batches as `/_broadcast` arrays */
  publish?: TargetPublish;
  /** The target accepted `seq` of key `k` (HTTP 201 for its batch). */
  onAccepted(k: number, seq: number): void;
}

/** The seq bound per key for a step: what the ledgers must be sized for. */
export const messagesPerKey = (ratePerSec: number, durationMs: number, keys: number) => Math.max(1, Math.ceil(Math.round((ratePerSec * durationMs) / 1000) / keys));

export async function publishBatches(o: BatchPublisherOptions) {
  const maxInFlight = Math.max(1, o.maxInFlight ?? 4);
  const agents = o.urls.map(() => new Agent({ keepAlive: true, maxSockets: maxInFlight }));
  const targets = o.urls.map((u) => new URL('/_broadcast', u));
  // Arrays are /_broadcast's: a target with a publish of its own takes one message per request.
  const single = o.publish && o.publish !== broadcastPublish ? o.urls.map((_, i) => messageSender({ publish: o.publish, agent: agents[i]! })) : undefined;
  const perCall = o.publish && 'send' in o.publish && o.publish.sendBatch ? Math.max(1, Math.min(10_000, Math.floor(o.publish.maxBatch ?? 10))) : 1;
  const offered = Math.round((o.ratePerSec * o.durationMs) / 1000);
  const r = {
    /** Messages due over the duration at the rate. */
    offered,
    /** Messages put on the wire. */
    sent: 0,
    published: 0,
    failed: 0,
    /** How late ticks fired behind schedule (the runner's own loop), ms. */
    tickLateMaxMs: 0,
    elapsedMs: 0,
  };
  const seqs = new Int32Array(o.keys.length);
  const pad = 'x'.repeat(o.payloadBytes ?? 0);
  const inflight = new Set<Promise<void>>();
  /** Batches in flight per key and per node; batches built but not yet sent, oldest first. */
  const keyBusy = new Int32Array(o.keys.length);
  const nodeBusy = new Int32Array(o.urls.length);
  /** A batch: `body` is its `/_broadcast` array, or `messages` those of a target with its own publish (one per call unless it has sendBatch). */
  type Batch = { node: number; items: { k: number; seq: number }[]; body: string; messages?: PublishMessage[] };
  const waiting: Batch[] = [];
  const t0 = Date.now();
  let tick = 0;
  let next = 0;

  const post = ({ node, items, body, messages }: Batch) =>
    new Promise<void>((resolve) => {
      const done = (ok: boolean) => {
        if (ok) {
          r.published += items.length;
          for (const it of items) o.onAccepted(it.k, it.seq);
        } else r.failed += items.length;
        resolve();
      };
      if (single && messages) return single[node]!(o.urls[node]!, messages.length === 1 ? messages[0]! : messages, (x) => done(x.ok));
      const req = request(targets[node]!, { method: 'POST', agent: agents[node], timeout: 10_000, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode === 201));
      });
      req.on('timeout', () => req.destroy(Object.assign(new Error('no answer'), { code: 'TIMEOUT' })));
      req.on('error', () => done(false));
      req.end(body);
    });

  const dispatch = (): void => {
    for (;;) {
      const b = waiting[0];
      if (!b || nodeBusy[b.node]! >= maxInFlight || b.items.some((it) => keyBusy[it.k]! > 0)) return;
      waiting.shift();
      nodeBusy[b.node]!++;
      for (const it of b.items) keyBusy[it.k]!++;
      const p = post(b).then(() => {
        nodeBusy[b.node]!--;
        for (const it of b.items) keyBusy[it.k]!--;
        inflight.delete(p);
        dispatch();
      });
      inflight.add(p);
    }
  };

  await new Promise<void>((resolveAll) => {
    const fire = () => {
      const now = Date.now();
      r.tickLateMaxMs = Math.max(r.tickLateMaxMs, now - (t0 + tick * o.tickMs));
      const due = Math.min(offered, Math.round(((now - t0) * o.ratePerSec) / 1000));
      // A batch never exceeds the servers' 10,000-item limit (BROADCAST_LIMITS.maxBatch).
      const n = Math.min(due - r.sent, 10_000);
      if (n > 0) {
        const items: { k: number; seq: number }[] = [];
        const parts: string[] = [];
        const node = tick % o.urls.length;
        let own: Batch | undefined;
        for (let i = 0; i < n; i++) {
          const k = next;
          next = (next + 1) % o.keys.length;
          const seq = ++seqs[k]!;
          const key = o.keys[k]!;
          const data = JSON.stringify({ seq, sentAt: now, runId: key.key, ...(pad ? { pad } : {}) } satisfies PublishPayload);
          if (single) {
            if (!own || own.items.length >= perCall || own.items.some((it) => it.k === k)) waiting.push((own = { node, items: [], body: '', messages: [] }));
            own.items.push({ k, seq });
            own.messages!.push({ stream: key.streamName, data, seq, idempotencyKey: idempotencyKey(key.key, key.streamName, seq) });
          } else {
            items.push({ k, seq });
            parts.push(JSON.stringify({ stream: key.streamName, data }));
          }
        }
        r.sent += n;
        if (!single) waiting.push({ node, items, body: `[${parts.join(',')}]` });
        dispatch();
      }
      tick++;
      if (r.sent >= offered || now - t0 > o.durationMs + 5 * o.tickMs) return resolveAll();
      setTimeout(fire, Math.max(0, t0 + tick * o.tickMs - Date.now()));
    };
    fire();
  });
  // Batches still waiting go out as the ones in flight are answered; bounded by the request timeout.
  while (inflight.size > 0) await Promise.race(inflight);
  r.elapsedMs = Date.now() - t0;
  for (const a of agents) a.destroy();
  return r;
}
