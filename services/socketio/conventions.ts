/**
 * Two client conventions share one server, chosen per socket by how it joined a stream:
 *
 * - Rebound's: `socket.emit('subscribe', stream, ack)`; `message` carries the broadcast `data`
 *   string untouched (engine/targets/socketio.ts relies on it).
 * - The benchmark's (nodejs-websocket-bench): `socket.emit('join', stream)` with no ack;
 *   `message` carries `data` parsed from JSON into an object, as that benchmark's server sends it.
 *
 * Each convention is its own room, so `io.to(room).emit` (and Connection State Recovery, which
 * replays room broadcasts) keeps working unchanged: the stream's name is Rebound's room, and the
 * same name behind a prefix no broadcast can target (streams never start with NUL) is the
 * benchmark's.
 */
export const OBJECT_ROOM_PREFIX = '\u0000obj:';

export const objectRoom = (stream: string) => OBJECT_ROOM_PREFIX + stream;

/**
 * The benchmark's server JSON.parses `data` and answers 500 when it is not JSON; here the
 * broadcast is never refused for one convention's sake: data that is not JSON goes out as the
 * string it is.
 */
export function asObjectPayload(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}
