import type { Broker } from '../broker/types.ts';
import type { Hub } from '../hub/index.ts';
import type { ReplayServerOptions } from '../options.ts';
import type { DisconnectReason, FrameError } from '../protocol/types.ts';
import type { TopicMembers } from './topic-members.ts';
import type { SocketOps } from './transport.ts';
import type { StreamResolver } from '../protocol/streams.ts';
import type { Connection } from './index.ts';

/** Counters exported by /metrics. Plain numbers, mutated in place. */
export interface ServerCounters {
  connectionsTotal: number;
  subscribesConfirmed: number;
  subscribesRejected: number;
  historyConfirmed: number;
  historyRejected: number;
  /** History requests naming an epoch the broker lost (Redis came back empty): rejected with the cause, then served from the new epoch. */
  historyEpochHandovers: number;
  restoreHits: number;
  restoreMisses: number;
  historyCoalesced: number;
  historyPages: number;
  historyGapsRejected: number;
  whispers: number;
  whisperBytes: number;
  whispersDropped: number;
  whispersRefused: number;
  ignoredCommands: number;
  /** too_slow for lack of progress (no drain for slowConsumerMs). */
  slowConsumerStalls: number;
  /** too_slow for more than maxQueuedBytes waiting. */
  queueOverflows: number;
  /** Subscribes (and restored identifiers) refused by maxIdentifierBytes / maxSessionBytes. */
  sessionLimitRejects: number;
  /** Connections paused for sending many frames during a ?sid= restore. */
  earlyFramePauses: number;
  badFrames: Record<FrameError | 'socket_error', number>;
  disconnects: Record<DisconnectReason, number>;
}

export function createCounters(): ServerCounters {
  return {
    connectionsTotal: 0,
    subscribesConfirmed: 0,
    subscribesRejected: 0,
    historyConfirmed: 0,
    historyRejected: 0,
    historyEpochHandovers: 0,
    restoreHits: 0,
    restoreMisses: 0,
    historyCoalesced: 0,
    historyPages: 0,
    historyGapsRejected: 0,
    whispers: 0,
    whisperBytes: 0,
    whispersDropped: 0,
    whispersRefused: 0,
    ignoredCommands: 0,
    slowConsumerStalls: 0,
    queueOverflows: 0,
    sessionLimitRejects: 0,
    earlyFramePauses: 0,
    badFrames: { not_json: 0, not_object: 0, no_command: 0, unknown_command: 0, bad_identifier: 0, bad_data: 0, socket_error: 0 },
    disconnects: { server_restart: 0, too_slow: 0, unauthorized: 0, invalid_request: 0 },
  };
}

/** Everything a connection shares with the rest of the server (one object, not per-conn copies). */
export interface ConnectionContext {
  readonly opts: ReplayServerOptions;
  readonly hub: Hub;
  readonly broker: Broker;
  readonly resolve: StreamResolver;
  readonly counters: ServerCounters;
  /** The transport under every connection of this server. */
  readonly io: SocketOps;
  /** The connections in the transport's topics, where it has them (SocketOps.topics). */
  readonly topics: TopicMembers<Connection> | undefined;
  /** `io`'s disconnect frames, one per reason (connection/index.ts disconnectFrames). */
  readonly disconnectFrames: Record<DisconnectReason, Buffer>;
  /** True during graceful stop: clients drop their sid on `disconnect`, so sessions are not re-committed. */
  readonly stopping: boolean;
  /** Called once when the socket is gone. */
  closed(conn: Connection): void;
}

/** Parameters read from the upgrade request. */
export interface ConnectParams {
  restoreSid: string | undefined;
  token: string | undefined;
}
