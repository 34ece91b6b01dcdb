import { randomUUID } from 'node:crypto';
import type { Broadcast } from './broadcast.ts';
import type { PrimaryLink } from './cluster/hub.ts';
import type { ReferenceLimits } from './limits.ts';
import { ProgressWatch } from './slow-consumer.ts';

/**
 * The raw-topics protocol of the at-most-once reference servers (ws, uWS), written once so both
 * speak exactly the same wire (docs/running.md): `welcome {sid}` on connect; client frames
 * subscribe/unsubscribe/whisper; data frames `{"stream","data"}`; `meta.exclude_socket` names a
 * welcome sid; the same bounds (buffered bytes with the slow-consumer rule, topics per socket,
 * name length). A server only supplies its sockets' transport; messages published while a
 * client is away are gone.
 *
 * With a `link` (one worker of `--workers N`) broadcasts and whispers go through the primary,
 * which sends them to every worker (this one too) in one order: each client gets each once, in
 * the same order whichever worker holds it.
 */

/** What one server library does with one of its sockets. `F` is its encoded frame. */
export interface TopicTransport<S, F> {
  /** Encode a frame once per message; every subscriber gets the same value. */
  encode(frame: string): F;
  /** Whether the socket still takes frames (a closing socket is skipped). */
  isOpen(s: S): boolean;
  /** Bytes queued on the socket that the peer has not taken yet. */
  bufferedAmount(s: S): number;
  write(s: S, frame: F): void;
  /** Cut the TCP connection at once: a reader that stopped cannot read a close frame either. */
  terminate(s: S): void;
}

/** What the fan-out sends: a broadcast, or a whisper (its sender in `meta.exclude_socket`). */
type Outgoing = Broadcast & { whisper?: true };

/** Per-socket state: its id (for `meta.exclude_socket`), its topics and whether it keeps reading. */
export interface TopicClient {
  sid: string;
  topics: Set<string>;
  progress: ProgressWatch;
}

export type TopicCounters = { connections: number; subscriptions: number; tooSlowDisconnects: number; refusedSubscriptions: number; whispers: number };

export function createTopicHub<S, F>(limits: ReferenceLimits, t: TopicTransport<S, F>, link?: PrimaryLink) {
  const topics = new Map<string, Set<S>>();
  const clients = new Map<S, TopicClient>();
  const bySid = new Map<string, S>();
  const counters: TopicCounters = { connections: 0, subscriptions: 0, tooSlowDisconnects: 0, refusedSubscriptions: 0, whispers: 0 };

  /** Send unless the socket already holds more than the bound unsent: then it is too slow. */
  const send = (s: S, frame: F): void => {
    if (!t.isOpen(s)) return;
    const queued = t.bufferedAmount(s);
    if (queued > limits.maxBufferedBytes && clients.get(s)?.progress.tooSlow(queued, limits)) {
      counters.tooSlowDisconnects++;
      t.terminate(s);
      return;
    }
    t.write(s, frame);
  };
  const reply = (s: S, o: Record<string, unknown>) => send(s, t.encode(JSON.stringify(o)));

  /** This process's subscribers of each item; a sid that lives on another worker skips nobody here. */
  const fanout = (batch: Outgoing[]) => {
    for (const b of batch) {
      const subs = topics.get(b.stream);
      if (!subs) continue;
      const skip = b.meta?.exclude_socket === undefined ? undefined : bySid.get(b.meta.exclude_socket);
      // One frame per message, shared by every subscriber.
      const frame = t.encode(JSON.stringify(b.whisper ? { type: 'whisper', stream: b.stream, data: b.data } : { stream: b.stream, data: b.data }));
      for (const s of subs) if (s !== skip) send(s, frame);
    }
  };
  // Relayed items come from this cluster's own workers, validated where they entered.
  link?.onRelay((items) => fanout(items as Outgoing[]));

  const unsubscribe = (s: S, me: TopicClient, stream: string) => {
    const set = topics.get(stream);
    if (set?.delete(s)) counters.subscriptions--;
    if (set && set.size === 0) topics.delete(stream);
    me.topics.delete(stream);
  };

  return {
    counters,
    /** The HTTP side's fan-out: the 201 waits until the primary has sent the batch to every worker. */
    deliver: (batch: Broadcast[]): void | Promise<void> => (link ? link.relay(batch) : fanout(batch)),
    stats: () => ({ ...counters, streams: topics.size, limits }),
    report: () => ({ connections: counters.connections, subscriptions: counters.subscriptions, whispers: counters.whispers, tooSlowDisconnects: counters.tooSlowDisconnects }),

    /** A new socket: its state, and the welcome with its sid. */
    open(s: S): TopicClient {
      counters.connections++;
      const me: TopicClient = { sid: randomUUID(), topics: new Set(), progress: new ProgressWatch() };
      clients.set(s, me);
      bySid.set(me.sid, s);
      reply(s, { type: 'welcome', sid: me.sid });
      return me;
    },

    /** The socket is gone: out of every topic. */
    close(s: S): void {
      const me = clients.get(s);
      if (!me) return;
      counters.connections--;
      for (const stream of [...me.topics]) unsubscribe(s, me, stream);
      clients.delete(s);
      bySid.delete(me.sid);
    },

    /** One client frame; `text` undefined for a binary frame (answered invalid_json). */
    frame(s: S, text: string | undefined): void {
      const me = clients.get(s);
      if (!me) return;
      let msg: { type?: unknown; stream?: unknown; data?: unknown };
      try {
        msg = JSON.parse(text ?? '');
      } catch {
        return reply(s, { type: 'error', reason: 'invalid_json' });
      }
      if (typeof msg !== 'object' || msg === null || typeof msg.stream !== 'string' || msg.stream === '') return reply(s, { type: 'error', reason: 'invalid_command' });
      const stream = msg.stream;
      if (stream.length > limits.maxStreamLength) return reply(s, { type: 'error', reason: 'invalid_stream', stream: stream.slice(0, 64) });
      if (msg.type === 'subscribe') {
        if (!me.topics.has(stream)) {
          if (me.topics.size >= limits.maxSubscriptions) {
            counters.refusedSubscriptions++;
            return reply(s, { type: 'error', reason: 'too_many_subscriptions', stream });
          }
          let set = topics.get(stream);
          if (!set) topics.set(stream, (set = new Set()));
          set.add(s);
          me.topics.add(stream);
          counters.subscriptions++;
        }
        reply(s, { type: 'subscribed', stream });
      } else if (msg.type === 'unsubscribe') {
        unsubscribe(s, me, stream);
        reply(s, { type: 'unsubscribed', stream });
      } else if (msg.type === 'whisper') {
        // Client-to-client, like AnyCable's whisper: to the topic's other subscribers, only from a subscriber.
        if (!me.topics.has(stream)) return reply(s, { type: 'error', reason: 'not_subscribed', stream });
        if (typeof msg.data !== 'string') return reply(s, { type: 'error', reason: 'invalid_whisper', stream });
        counters.whispers++;
        const whisper: Outgoing = { stream, data: msg.data, meta: { exclude_socket: me.sid }, whisper: true };
        if (link) link.relayNoWait([whisper]);
        else fanout([whisper]);
      } else {
        reply(s, { type: 'error', reason: 'unknown_type' });
      }
    },

    /** Every socket this hub holds (to say goodbye on stop). */
    sockets: (): IterableIterator<S> => clients.keys(),
    get size(): number {
      return clients.size;
    },
  };
}

export type TopicHub<S, F> = ReturnType<typeof createTopicHub<S, F>>;
