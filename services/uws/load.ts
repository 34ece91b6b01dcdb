import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/**
 * Where uWebSockets.js comes from. The official package is published only from GitHub, which
 * npm cannot reach everywhere, and npm republishes of v20.5x need glibc 2.38; this tree pins
 * `@trufflesuite/uws-js-unofficial` (a build of uWebSockets.js v20.30 with prebuilt binaries) as
 * an optional dependency (docs/uws.md). It is optional: where its binary does not load, the
 * `uws` target says "not installed here" with the reason and everything else runs.
 *
 * `UWS_MODULE` names another module (or path) that exports uWebSockets.js itself, e.g.
 * `uWebSockets.js` installed from GitHub (`npm i uNetworking/uWebSockets.js#v20.52.0`).
 */
export const DEFAULT_UWS_PACKAGE = '@trufflesuite/uws-js-unofficial';

/** The few parts of uWebSockets.js this tree uses (typed here so typecheck needs no binary). */
export interface UwsSocket<U> {
  send(message: string | ArrayBuffer | Uint8Array, isBinary?: boolean, compress?: boolean): number;
  getBufferedAmount(): number;
  end(code?: number, shortMessage?: string): void;
  close(): void;
  getUserData(): U;
  /** Run `cb` with this socket corked: its sends leave in one write. */
  cork(cb: () => void): UwsSocket<U>;
  subscribe(topic: string): boolean;
  unsubscribe(topic: string): boolean;
}
export interface UwsRequest {
  getHeader(lowerCaseKey: string): string;
  getUrl(): string;
  getMethod(): string;
  getQuery(): string | undefined;
}
export interface UwsResponse {
  writeStatus(status: string): UwsResponse;
  writeHeader(key: string, value: string): UwsResponse;
  end(body?: string | Uint8Array, closeConnection?: boolean): UwsResponse;
  cork(cb: () => void): UwsResponse;
  onAborted(cb: () => void): UwsResponse;
  getRemoteAddressAsText(): ArrayBuffer;
  onData(cb: (chunk: ArrayBuffer, isLast: boolean) => void): void;
  upgrade<U>(userData: U, key: string, protocol: string, extensions: string, context: unknown): void;
}
export interface UwsBehavior<U> {
  maxPayloadLength?: number;
  maxBackpressure?: number;
  closeOnBackpressureLimit?: boolean;
  idleTimeout?: number;
  sendPingsAutomatically?: boolean;
  compression?: number;
  upgrade?(res: UwsResponse, req: UwsRequest, context: unknown): void;
  open?(ws: UwsSocket<U>): void;
  message?(ws: UwsSocket<U>, message: ArrayBuffer, isBinary: boolean): void;
  drain?(ws: UwsSocket<U>): void;
  close?(ws: UwsSocket<U>, code: number, message: ArrayBuffer): void;
}
export interface UwsApp {
  ws<U>(pattern: string, behavior: UwsBehavior<U>): UwsApp;
  any(pattern: string, handler: (res: UwsResponse, req: UwsRequest) => void): UwsApp;
  /** `options` 1 = LIBUS_LISTEN_EXCLUSIVE_PORT (no SO_REUSEADDR either); 0 = SO_REUSEADDR + SO_REUSEPORT on Linux. */
  listen(host: string, port: number, options: 0 | 1, cb: (listenSocket: unknown) => void): UwsApp;
  /** Every socket subscribed to `topic` gets `message` (written at the end of the loop iteration, or before the socket's next send). */
  publish(topic: string, message: string | ArrayBuffer | Uint8Array, isBinary?: boolean, compress?: boolean): boolean;
}
export interface UwsModule {
  App(): UwsApp;
  us_listen_socket_close(listenSocket: unknown): void;
  us_socket_local_port(listenSocket: unknown): number;
}

export type UwsLoad = { ok: true; uws: UwsModule; from: string } | { ok: false; reason: string };

const loaded = new Map<string, UwsLoad>();

/**
 * Load uWebSockets.js's native binary, never a stand-in. The trufflesuite package's own entry
 * falls back, with a warning, to a slow JavaScript implementation when its binary does not load;
 * a benchmark row must not quietly become something else, so its binary is required directly.
 * Any other module (`UWS_MODULE`) is required as it is: the official one throws when it cannot load.
 */
export function loadUws(module = process.env.UWS_MODULE || DEFAULT_UWS_PACKAGE): UwsLoad {
  const hit = loaded.get(module);
  if (hit) return hit;
  const require = createRequire(import.meta.url);
  let result: UwsLoad;
  try {
    let from = module;
    if (module === DEFAULT_UWS_PACKAGE) {
      const dir = dirname(require.resolve(`${DEFAULT_UWS_PACKAGE}/package.json`));
      from = join(dir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
    }
    const uws = require(from) as UwsModule;
    if (typeof uws?.App !== 'function') throw new Error(`${from} does not export uWebSockets.js (no App())`);
    result = { ok: true, uws, from };
  } catch (err) {
    const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
    result = { ok: false, reason: `uWebSockets.js not installed here (${module}): ${why}` };
  }
  loaded.set(module, result);
  return result;
}

/** Whether the `uws` target can run on this machine; `reason` when it cannot. */
export function uwsAvailability(module?: string): { available: boolean; reason?: string } {
  const r = loadUws(module);
  return r.ok ? { available: true } : { available: false, reason: r.reason };
}
