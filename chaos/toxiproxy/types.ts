import type { TOXIC_ATTRIBUTES } from './toxics.ts';

/**
 * Public types of the embedded Toxiproxy-compatible chaos proxy. The wire shapes mirror
 * Toxiproxy 2.12.0 (`api.go`, `toxics/*.go`); see docs/chaos-proxy.md for the deliberate deviations.
 */

/** The toxic types Toxiproxy registers (`down` is not one: disable the proxy instead). */
export const TOXIC_TYPES = ['latency', 'bandwidth', 'slow_close', 'timeout', 'reset_peer', 'slicer', 'limit_data', 'noop'] as const;
export type ToxicType = (typeof TOXIC_TYPES)[number];

/** upstream = client → server bytes, downstream = server → client bytes. */
export type Direction = 'upstream' | 'downstream';

/** Each toxic type's integer attributes, as named by the registry in toxics.ts (which holds their ranges). */
export type ToxicAttributeMap = { [K in ToxicType]: Record<keyof (typeof TOXIC_ATTRIBUTES)[K], number> };

/** Toxic JSON exactly as Toxiproxy serialises it (field order included). */
export interface ToxicJson {
  attributes: Record<string, number>;
  name: string;
  type: ToxicType;
  /** The stream as the caller spelled it (Toxiproxy keeps the casing). */
  stream: string;
  toxicity: number;
}

/** Proxy JSON exactly as Toxiproxy serialises it, including the stray `Logger` field (v2.5.0+). */
export interface ProxyJson {
  name: string;
  listen: string;
  upstream: string;
  enabled: boolean;
  Logger: Record<string, never>;
  toxics: ToxicJson[];
}

/** Options of {@link createToxiproxyServer}. */
export interface ToxiproxyServerOptions {
  /**
   * API port; 0 picks a free one (read it back from the returned `port`).
   * @default 8474
   */
  port?: number;
  /**
   * API host. Toxiproxy's own default is `localhost`.
   * @default '127.0.0.1'
   */
  host?: string;
  /** Seed for toxicity rolls, jitter and slicer sizes (Toxiproxy's `-seed`). Random when omitted. */
  seed?: number;
  /**
   * Bytes a link may hold (in toxics plus the destination socket's buffer) before it stops
   * reading its source. Backpressure then travels to the sender over TCP.
   * @default 1048576 (1 MiB)
   */
  maxBufferedBytes?: number;
  /**
   * Allow non-loopback addresses: the API host, proxy listens (a wildcard listen otherwise binds
   * 127.0.0.1) and upstreams. Off by default: Rebound only ever loads loopback.
   * @default false
   */
  allowPublic?: boolean;
  /** Proxies to create at start, like `toxiproxy-server -config file.json`. */
  populate?: readonly ProxyInput[];
}

export const DEFAULT_TOXIPROXY_SERVER_OPTIONS = Object.freeze({
  port: 8474,
  host: '127.0.0.1',
  maxBufferedBytes: 1024 * 1024,
  allowPublic: false,
});

/** What `POST /proxies` and `POST /populate` accept: a proxy's own fields, listen and enabled optional. */
export type ProxyInput = Pick<ProxyJson, 'name' | 'upstream'> & Partial<Pick<ProxyJson, 'listen' | 'enabled'>>;

interface ToxiproxyServerStats {
  proxies: number;
  /** Live proxied TCP connections over all proxies. */
  connections: number;
  /** Timers currently armed by toxics over all connections (0 when every link is idle). */
  timers: number;
}

/** Handle returned by {@link createToxiproxyServer}. */
export interface ToxiproxyServer {
  /** Base URL for `new Toxiproxy(url)`, e.g. `http://127.0.0.1:8474`. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  stats(): ToxiproxyServerStats;
  /** Stops every proxy (closing listeners and connections) and the API server. Idempotent. */
  close(): Promise<void>;
}

/** Error codes raised by our own chaos-proxy code (not the Toxiproxy wire errors). */
export type ChaosErrorCode =
  /** The API server (or a standalone proxy) could not bind its address. */
  | 'RR_ERR_CHAOS_PROXY_LISTEN'
  /** A Toxiproxy API call made by the runner helper failed (status or network error). */
  | 'RR_ERR_CHAOS_PROXY_API';
