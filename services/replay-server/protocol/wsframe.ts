import type { Socket } from 'node:net';
import type { WebSocket } from 'ws';

/**
 * Prebuilt WebSocket frames. A server→client text frame is unmasked, so the complete frame
 * (header + payload) is the same bytes for every recipient: we build it once per message and
 * identifier and write that one Buffer to each socket. One `write` per delivery instead of
 * ws's per-send header allocation and two-buffer writev (syscalls dominate fan-out cost).
 */
export function textFrame(payload: string): Buffer {
  const len = Buffer.byteLength(payload);
  const hlen = len < 126 ? 2 : len < 65536 ? 4 : 10;
  const buf = Buffer.allocUnsafeSlow(hlen + len);
  buf[0] = 0x81; // FIN + text
  if (len < 126) buf[1] = len;
  else if (len < 65536) {
    buf[1] = 126;
    buf.writeUInt16BE(len, 2);
  } else {
    buf[1] = 127;
    buf.writeUInt32BE(Math.floor(len / 2 ** 32), 2);
    buf.writeUInt32BE(len >>> 0, 6);
  }
  buf.write(payload, hlen, 'utf8');
  return buf;
}

/**
 * The socket under a `ws` WebSocket. Writing prebuilt frames straight to it keeps ordering with
 * `ws.send()` because, with permessage-deflate off, ws writes synchronously and queues nothing.
 */
export function socketOf(ws: WebSocket): Socket | undefined {
  return (ws as unknown as { _socket?: Socket })._socket;
}
