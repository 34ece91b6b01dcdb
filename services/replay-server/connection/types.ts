import type { Broker } from '../broker/types.ts';
import type { Hub } from '../hub/index.ts';
import type { ReplayServerOptions } from '../options.ts';
import type { DisconnectReason, FrameError } from '../protocol/types.ts';
import type { StreamResolver } from '../protocol/streams.ts';
import type { Connection } from './index.ts';

/** Counters exported by /metrics. Plain numbers, mutated in place. */
export interface ServerCounters {
  connectionsTotal: number;
  subscribesConfirmed: number;
  subscribesRejected: number;
  historyConfirmed: number;
  historyRejected: number;
  restoreHits: number;
  restoreMisses: number;
  whispers: number;
  ignoredCommands: number;
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
    restoreHits: 0,
    restoreMisses: 0,
    whispers: 0,
    ignoredCommands: 0,
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
