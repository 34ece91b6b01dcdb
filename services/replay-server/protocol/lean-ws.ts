import { isUtf8 } from 'node:buffer';
import type { Socket } from 'node:net';
import { WebSocket } from 'ws';

/**
 * The replay server's WebSocket: ws's handshake (WebSocketServer's `WebSocket` option) and API,
 * with a frame reader of its own in place of ws's Receiver and Sender. The server writes
 * prebuilt frames straight to the socket (wsframe.ts) and reads only small client frames, so it
 * needs neither; per idle connection they are ~700 B of heap (a heap snapshot of 5,000 idle
 * connections: Receiver 272 B and its WritableState 104, their listener table and buffers, the
 * write callback's bound function, Sender 96 and its queue), a fifth of what a connection costs.
 *
 * The rules kept from ws (RFC 6455, no extensions negotiated): client frames must be masked and
 * have no RSV bits, control frames are final and at most 125 bytes, a message (all its
 * fragments) over `maxPayload` is refused with 1009, text must be UTF-8 (1007), other protocol
 * errors 1002; each protocol error is emitted as `error` and closes with its code; a client's
 * ping is answered with a pong; a close frame is answered and the socket ended; `close` is
 * emitted once the socket is gone, with the peer's code (1006 if none came).
 */

const SOCK = Symbol('rebound.leanws');
type Tagged = Socket & { [SOCK]?: LeanServerSocket };
/** ws's private fields the base class's getters and `terminate()` read. */
interface WsInternals {
  _socket: Socket | null;
  _readyState: number;
  _closeCode: number;
  _closeMessage: Buffer;
  _closeFrameReceived: boolean;
  _closeFrameSent: boolean;
  _closeTimer: NodeJS.Timeout | null;
  _paused: boolean;
  _errorEmitted: boolean;
}
const CLOSE_TIMEOUT_MS = 30_000; // ws's default: a peer that never answers our close frame
const EMPTY = Buffer.alloc(0);

export class WsProtocolError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly statusCode: number,
  ) {
    super(message);
  }
}

function onData(this: Tagged, chunk: Buffer): void {
  this[SOCK]?.read(chunk);
}
function onEnd(this: Tagged): void {
  const ws = this[SOCK];
  if (ws) (ws as unknown as WsInternals)._readyState = WebSocket.CLOSING;
  this.end();
}
function onSocketError(this: Tagged): void {
  // As ws: a transport error ends the socket; `close` (1006) tells the owner.
  this.removeListener('error', onSocketError);
  this.on('error', noop);
  const ws = this[SOCK];
  if (ws) (ws as unknown as WsInternals)._readyState = WebSocket.CLOSING;
  this.destroy();
}
function onSocketClose(this: Tagged): void {
  const ws = this[SOCK];
  this[SOCK] = undefined;
  this.removeListener('data', onData);
  this.removeListener('end', onEnd);
  ws?.closed();
}
const noop = () => {};

const isValidCloseCode = (c: number) => (c >= 1000 && c <= 1014 && c !== 1004 && c !== 1005 && c !== 1006) || (c >= 3000 && c <= 4999);

/** An unmasked server frame (FIN set) with a short payload: pongs and close frames. */
function controlFrame(opcode: number, payload: Buffer): Buffer {
  const f = Buffer.allocUnsafe(2 + payload.length);
  f[0] = 0x80 | opcode;
  f[1] = payload.length;
  payload.copy(f, 2);
  return f;
}

export class LeanServerSocket extends WebSocket {
  /** Bytes of an incomplete frame, kept between reads (at most one frame: maxPayload + 14). */
  private rx: Buffer | undefined;
  /** Fragments of a message still in progress, and whether it is binary. */
  private frags: Buffer[] | undefined;
  private fragBytes = 0;
  private fragBinary = false;
  private maxPayload = 0;
  /** Set on the first protocol error: nothing more is read. */
  private failed = false;

  private get w(): WsInternals {
    return this as unknown as WsInternals;
  }

  /** Called by ws's WebSocketServer once the 101 answer is written. */
  setSocket(socket: Socket, head: Buffer, options: { maxPayload?: number }): void {
    const w = this.w;
    this.maxPayload = options.maxPayload ?? 0;
    w._socket = socket;
    (socket as Tagged)[SOCK] = this;
    if (socket.setTimeout) socket.setTimeout(0);
    if (socket.setNoDelay) socket.setNoDelay();
    // As ws: bytes that came with the upgrade are read first, after the owner has its listeners.
    if (head.length > 0) socket.unshift(head);
    socket.on('close', onSocketClose);
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('error', onSocketError);
    w._readyState = WebSocket.OPEN;
    this.emit('open');
  }

  /** Parse every complete frame in `chunk` (and what was left from the last read). */
  read(chunk: Buffer): void {
    if (this.failed) return;
    let buf = this.rx ? Buffer.concat([this.rx, chunk]) : chunk;
    this.rx = undefined;
    let off = 0;
    while (!this.failed && buf.length - off >= 2) {
      const b0 = buf[off]!;
      const b1 = buf[off + 1]!;
      const fin = (b0 & 0x80) !== 0;
      const opcode = b0 & 0x0f;
      if (b0 & 0x70) return this.fail('WS_ERR_UNEXPECTED_RSV_1', 'RSV1, RSV2 and RSV3 must be clear', 1002);
      if (!(b1 & 0x80)) return this.fail('WS_ERR_EXPECTED_MASK', 'MASK must be set', 1002);
      let len = b1 & 0x7f;
      let h = 2;
      if (len === 126) {
        if (buf.length - off < 4) break;
        len = buf.readUInt16BE(off + 2);
        h = 4;
      } else if (len === 127) {
        if (buf.length - off < 10) break;
        const hi = buf.readUInt32BE(off + 2);
        // Over 2^53 - 1 is not a length JavaScript can hold, and far over any maxPayload.
        if (hi > 0x1fffff) return this.fail('WS_ERR_UNSUPPORTED_DATA_PAYLOAD_LENGTH', 'Unsupported WebSocket frame: payload length > 2^53 - 1', 1009);
        len = hi * 2 ** 32 + buf.readUInt32BE(off + 6);
        h = 10;
      }
      const control = opcode >= 0x8;
      if (control) {
        if (!fin) return this.fail('WS_ERR_EXPECTED_FIN', 'FIN must be set', 1002);
        if (len > 125) return this.fail('WS_ERR_INVALID_CONTROL_PAYLOAD_LENGTH', `invalid payload length ${len}`, 1002);
      } else if (this.maxPayload > 0 && this.fragBytes + len > this.maxPayload) {
        return this.fail('WS_ERR_UNSUPPORTED_MESSAGE_LENGTH', 'Max payload size exceeded', 1009);
      }
      if (buf.length - off < h + 4 + len) break;
      const maskAt = off + h;
      const start = maskAt + 4;
      const payload = buf.subarray(start, start + len);
      for (let i = 0; i < len; i++) payload[i]! ^= buf[maskAt + (i & 3)]!;
      off = start + len;
      if (control) this.control(opcode, payload);
      else this.data(opcode, fin, payload);
    }
    // Keep only the unread tail, copied: the read's whole chunk is not held for it.
    if (!this.failed && off < buf.length) this.rx = Buffer.from(buf.subarray(off));
  }

  private data(opcode: number, fin: boolean, payload: Buffer): void {
    if (opcode === 0x0) {
      if (!this.frags) return this.fail('WS_ERR_INVALID_OPCODE', 'invalid opcode 0', 1002);
    } else if (opcode === 0x1 || opcode === 0x2) {
      if (this.frags) return this.fail('WS_ERR_INVALID_OPCODE', `invalid opcode ${opcode}`, 1002);
      this.fragBinary = opcode === 0x2;
      if (fin) return this.message(payload, this.fragBinary);
      this.frags = [];
    } else return this.fail('WS_ERR_INVALID_OPCODE', `invalid opcode ${opcode}`, 1002);
    this.frags!.push(Buffer.from(payload));
    this.fragBytes += payload.length;
    if (!fin) return;
    const whole = Buffer.concat(this.frags!, this.fragBytes);
    this.frags = undefined;
    this.fragBytes = 0;
    this.message(whole, this.fragBinary);
  }

  private message(data: Buffer, binary: boolean): void {
    if (!binary && !isUtf8(data)) return this.fail('WS_ERR_INVALID_UTF8', 'invalid UTF-8 sequence', 1007);
    this.emit('message', data, binary);
  }

  private control(opcode: number, payload: Buffer): void {
    const w = this.w;
    if (opcode === 0x8) {
      if (payload.length === 1) return this.fail('WS_ERR_INVALID_CONTROL_PAYLOAD_LENGTH', 'invalid payload length 1', 1002);
      const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
      if (payload.length >= 2 && !isValidCloseCode(code)) return this.fail('WS_ERR_INVALID_CLOSE_CODE', `invalid status code ${code}`, 1002);
      const reason = payload.subarray(2);
      if (!isUtf8(reason)) return this.fail('WS_ERR_INVALID_UTF8', 'invalid UTF-8 sequence', 1007);
      w._closeFrameReceived = true;
      w._closeCode = code;
      w._closeMessage = Buffer.from(reason);
      // Nothing after a close frame is read.
      this.stopReading();
      this.close(code === 1005 ? undefined : code);
    } else if (opcode === 0x9) {
      if (w._readyState === WebSocket.OPEN) w._socket?.write(controlFrame(0xa, payload));
      this.emit('ping', Buffer.from(payload));
    } else if (opcode === 0xa) {
      this.emit('pong', Buffer.from(payload));
    } else this.fail('WS_ERR_INVALID_OPCODE', `invalid opcode ${opcode}`, 1002);
  }

  /** A protocol error: stop reading, tell the owner (`error`), close with the error's code. */
  private fail(code: string, message: string, statusCode: number): void {
    const w = this.w;
    this.stopReading();
    this.close(statusCode);
    if (!w._errorEmitted) {
      w._errorEmitted = true;
      this.emit('error', new WsProtocolError(code, message, statusCode));
    }
  }

  /** Read nothing more; a paused socket flows again so its end and close still come (as ws). */
  private stopReading(): void {
    this.failed = true;
    this.rx = undefined;
    this.frags = undefined;
    const socket = this.w._socket;
    if (!socket) return;
    socket.removeListener('data', onData);
    process.nextTick(() => socket.resume());
  }

  /** The closing handshake: send our close frame; end the socket once both frames have passed. */
  override close(code?: number, data?: string | Buffer): void {
    const w = this.w;
    const socket = w._socket;
    if (w._readyState === WebSocket.CLOSED || !socket) return;
    if (w._readyState === WebSocket.CLOSING) {
      if (w._closeFrameSent && (w._closeFrameReceived || this.failed)) socket.end();
      return;
    }
    w._readyState = WebSocket.CLOSING;
    let payload = EMPTY;
    if (code !== undefined) {
      const reason = data === undefined ? EMPTY : Buffer.isBuffer(data) ? data : Buffer.from(data);
      payload = Buffer.allocUnsafe(2 + Math.min(reason.length, 123));
      payload.writeUInt16BE(code, 0);
      reason.copy(payload, 2, 0, 123);
    }
    socket.write(controlFrame(0x8, payload), (err) => {
      if (err) return; // the socket's own error listener ends it
      w._closeFrameSent = true;
      if (w._closeFrameReceived || this.failed) socket.end();
    });
    w._closeTimer = setTimeout(() => socket.destroy(), CLOSE_TIMEOUT_MS);
  }

  override resume(): void {
    const w = this.w;
    if (w._readyState === WebSocket.CONNECTING || w._readyState === WebSocket.CLOSED) return;
    w._paused = false;
    w._socket?.resume();
  }

  /** The replay server writes its frames to the socket itself (wsframe.ts); ws's Sender is not made. */
  override send(): void {
    throw new Error('LeanServerSocket: write frames to the socket (protocol/wsframe.ts)');
  }

  override ping(): void {
    throw new Error('LeanServerSocket: pings are AnyCable frames (protocol/wsframe.ts)');
  }

  override pong(): void {
    throw new Error('LeanServerSocket: pongs are sent by the frame reader');
  }

  /** The socket is gone: one `close` event with the peer's code, 1006 if it sent none. */
  closed(): void {
    const w = this.w;
    if (w._closeTimer) clearTimeout(w._closeTimer);
    w._closeTimer = null;
    this.rx = undefined;
    this.frags = undefined;
    w._readyState = WebSocket.CLOSED;
    this.emit('close', w._closeFrameReceived ? w._closeCode : 1006, w._closeMessage);
  }
}
