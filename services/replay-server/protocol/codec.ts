import { DISCONNECT_RECONNECT, type ClientCommand, type DisconnectReason, type ParsedFrame } from './types.ts';

/**
 * Frame parsing and frame building. Builders return strings; callers that send the same frame to
 * many sockets turn it into one Buffer first (see hub/), so a payload is encoded once per
 * message and identifier, never once per subscriber.
 */

const PRESENCE_COMMANDS = new Set(['join', 'leave', 'presence']);

export function parseFrame(text: string): ParsedFrame {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { ok: false, error: 'not_json' };
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return { ok: false, error: 'not_object' };
  const o = v as Record<string, unknown>;
  const command = o.command;
  if (typeof command !== 'string') return { ok: false, error: 'no_command' };
  if (command === 'pong' || command === 'ping') return { ok: true, cmd: { command } };
  const identifier = o.identifier;
  const known = command === 'subscribe' || command === 'unsubscribe' || command === 'message' || command === 'whisper' || command === 'history' || PRESENCE_COMMANDS.has(command);
  if (!known) return { ok: false, error: 'unknown_command', command };
  if (typeof identifier !== 'string') return { ok: false, error: 'bad_identifier', command };
  switch (command) {
    case 'subscribe': {
      const cmd: ClientCommand = { command, identifier };
      if (o.history !== undefined && o.history !== null) {
        if (typeof o.history !== 'object' || Array.isArray(o.history)) return { ok: false, error: 'bad_data', command };
        cmd.history = o.history as Record<string, unknown>;
      }
      return { ok: true, cmd };
    }
    case 'unsubscribe':
      return { ok: true, cmd: { command, identifier } };
    case 'message':
      if (typeof o.data !== 'string') return { ok: false, error: 'bad_data', command };
      return { ok: true, cmd: { command, identifier, data: o.data } };
    case 'whisper':
      if (o.data === undefined) return { ok: false, error: 'bad_data', command };
      return { ok: true, cmd: { command, identifier, data: o.data } };
    case 'history':
      return { ok: true, cmd: { command, identifier, history: o.history } };
    default:
      return { ok: true, cmd: { command: 'presence', identifier } };
  }
}

/**
 * The `message` field of a data frame: broadcast `data` parsed as JSON when it is JSON (embedded
 * verbatim, it is valid JSON text), else the string itself (anycable-go `StreamMessage.ToReplyFor`).
 */
export function toMessageJson(data: string): string {
  try {
    JSON.parse(data);
    return data;
  } catch {
    return JSON.stringify(data);
  }
}

const q = JSON.stringify;

export const frames = {
  welcome: (sid: string) => `{"type":"welcome","sid":${q(sid)}}`,
  welcomeRestored: (sid: string, ids: readonly string[]) => `{"type":"welcome","sid":${q(sid)},"restored":true,"restored_ids":${q(ids)}}`,
  confirmSubscription: (identifier: string) => `{"type":"confirm_subscription","identifier":${q(identifier)}}`,
  rejectSubscription: (identifier: string) => `{"type":"reject_subscription","identifier":${q(identifier)}}`,
  confirmHistory: (identifier: string) => `{"type":"confirm_history","identifier":${q(identifier)}}`,
  /**
   * reject_history, with the broker's cause when there is one (`offset_evicted`, `unknown_epoch`,
   * `offset_ahead`, `stream_not_found`, `history_gap`, `broker_unavailable`): an extra field clients ignore, which lets a
   * benchmark say why a resume failed (engine/measure/loss-causes.ts).
   */
  rejectHistory: (identifier: string, reason?: string) => (reason === undefined ? `{"type":"reject_history","identifier":${q(identifier)}}` : `{"type":"reject_history","identifier":${q(identifier)},"reason":${q(reason)}}`),
  /** reject_history with its cause (an extra field clients ignore): the asked epoch ended, the new one's history follows. */
  rejectHistoryEpochChanged: (identifier: string) => `{"type":"reject_history","identifier":${q(identifier)},"reason":"epoch_changed"}`,
  presenceError: (identifier: string) => `{"type":"presence","identifier":${q(identifier)},"message":{"type":"error"}}`,
  ping: (unixSec: number) => `{"type":"ping","message":${unixSec}}`,
  pong: () => `{"type":"pong"}`,
  disconnect: (reason: DisconnectReason) => `{"type":"disconnect","reason":"${reason}","reconnect":${DISCONNECT_RECONNECT[reason]}}`,
  /** `{"identifier":"..."` — the per-subscription half of a data frame, cached per identifier. */
  dataPrefix: (identifier: string) => `{"identifier":${q(identifier)}`,
  /** The per-message half: `,"message":...,"stream_id":...,"epoch":...,"offset":N}`. */
  dataSuffix: (m: { stream: string; message: string; epoch?: string | undefined; offset?: number | undefined }) =>
    m.offset === undefined || m.epoch === undefined ? `,"message":${m.message}}` : storedSuffix(m.message, dataTail(m.stream, m.epoch), m.offset),
};

/**
 * `,"stream_id":...,"epoch":...,"offset":` — what every stored message of one stream and epoch
 * shares in its data frame (the hub keeps it per stream instead of quoting both per message).
 */
export const dataTail = (stream: string, epoch: string) => `,"stream_id":${q(stream)},"epoch":${q(epoch)},"offset":`;
/** A stored message's data-frame suffix from its stream's `dataTail`. */
export const storedSuffix = (message: string, tail: string, offset: number) => `,"message":${message}${tail}${offset}}`;
