/**
 * Wire types of the AnyCable extended Action Cable protocol as Rebound's replay server speaks it.
 * See docs/protocol/replay-v1.md for the full transcript-level description.
 */

/** The two JSON subprotocols we negotiate (anycable-go OSS set). Ext adds sid/restore/history. */
export const SUBPROTOCOL_BASE = 'actioncable-v1-json';
export const SUBPROTOCOL_EXT = 'actioncable-v1-ext-json';
export type Subprotocol = typeof SUBPROTOCOL_BASE | typeof SUBPROTOCOL_EXT;

/** The channel served without an RPC backend (anycable-go streams controller). */
export const PUBSUB_CHANNEL = '$pubsub';

/**
 * Reasons carried by `{"type":"disconnect"}` frames: a closed union, aggregated in /metrics.
 * `server_restart`: graceful stop (reconnect true). `too_slow`: outbound buffer over the limit
 * (reconnect true). `unauthorized`: access token missing or wrong (reconnect false).
 * `invalid_request`: a frame we cannot interpret (not JSON, wrong shape; reconnect false).
 */
export type DisconnectReason = 'server_restart' | 'too_slow' | 'unauthorized' | 'invalid_request';

export const DISCONNECT_RECONNECT: Readonly<Record<DisconnectReason, boolean>> = Object.freeze({
  server_restart: true,
  too_slow: true,
  unauthorized: false,
  invalid_request: false,
});

/** `{streams:{<stream>:{epoch,offset}}, since}` exactly as the client sends it (validated later). */
export interface HistoryRequest {
  since?: unknown;
  streams?: unknown;
}

/** A client command after shape validation. `identifier` is kept byte for byte. */
export type ClientCommand =
  | { command: 'subscribe'; identifier: string; history?: HistoryRequest }
  | { command: 'unsubscribe'; identifier: string }
  | { command: 'message'; identifier: string; data: string }
  | { command: 'whisper'; identifier: string; data: unknown }
  | { command: 'history'; identifier: string; history: unknown }
  | { command: 'presence'; identifier: string } // join / leave / presence: answered with a presence error
  | { command: 'pong' }
  | { command: 'ping' };

/** Why a frame could not become a command; the connection answers `disconnect invalid_request`. */
export type FrameError = 'not_json' | 'not_object' | 'no_command' | 'unknown_command' | 'bad_identifier' | 'bad_data';

export type ParsedFrame = { ok: true; cmd: ClientCommand } | { ok: false; error: FrameError; command?: string };

/** The subprotocol to answer from those a client offered: extended first; false accepts with none (as anycable-go). */
export const pickProtocol = (offered: ReadonlySet<string>): string | false => (offered.has(SUBPROTOCOL_EXT) ? SUBPROTOCOL_EXT : offered.has(SUBPROTOCOL_BASE) ? SUBPROTOCOL_BASE : false);
