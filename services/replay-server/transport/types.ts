import type { Server } from 'node:http';
import type { Connection } from '../connection/index.ts';
import type { SocketOps } from '../connection/transport.ts';
import type { ReplayHttpOptions } from '../http/index.ts';
import type { ReplayServerOptions } from '../options.ts';

/** The upgrade request's parts a connection starts from (read by the transport while the request is valid). */
export interface UpgradeInfo {
  /** The extended subprotocol was chosen (sessions, history). */
  ext: boolean;
  query: URLSearchParams;
  restoreSidHeader: string | undefined;
  jidHeader: string | undefined;
}

/** What the composition root gives a transport: the one place connections are made and started. */
export interface ListenerHooks {
  readonly opts: ReplayServerOptions;
  readonly http: ReplayHttpOptions;
  stopping(): boolean;
  /** A socket passed the upgrade: its Connection (not yet started). */
  open(sock: unknown, info: UpgradeInfo): Connection;
  /** Start it once the transport routes the socket's events to it (a start may close it at once). */
  start(conn: Connection, info: UpgradeInfo): void;
}

/** One transport's listener: it owns the port, the upgrade and the HTTP surface. */
export interface TransportListener {
  readonly io: SocketOps;
  /** The node:http server (ws transport); uWS serves HTTP itself. */
  readonly httpServer: Server | undefined;
  listen(port: number, host: string): Promise<number>;
  /** Stop accepting connections and requests; resolves once the listener is closed. */
  stopAccepting(): Promise<void>;
  /** Stop the HTTP surface's own timers (/metrics process monitor). */
  close(): void;
  /** End of a stop that does not exit the process: cut the HTTP connections still open. */
  dropAll(): void;
}
