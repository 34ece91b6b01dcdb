import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

/**
 * The leanest WebSocket client that still speaks RFC 6455 correctly enough for idle and
 * light-traffic runs: one `net.Socket`, a hand-written upgrade, masked client frames (an all-zero
 * mask key, which RFC 6455 allows), a frame reader that answers pings and close frames.
 * No per-connection objects beyond the socket and this one: a `ws` client costs several times
 * the memory, and the idle runner holds tens of thousands of these per process.
 */
export interface LeanSocketHandler {
  /** The upgrade succeeded. */
  open(): void;
  /** A complete text or binary message (fragments joined); valid only during the call (a view of the shared receive buffer). */
  message(payload: Buffer): void;
  /** The connection ended; `err` when it failed (before or after open). */
  closed(err: Error | undefined, code?: number): void;
}

const CRLF2 = Buffer.from('\r\n\r\n');

/**
 * One receive buffer for every LeanSocket in the process (`onread`): the kernel copies into it and
 * the frames are parsed in place, synchronously. That skips a Buffer allocation and the Readable
 * stream's bookkeeping per read, which at tens of thousands of deliveries a second is a large part
 * of a loader's CPU, and it holds no per-socket read buffer. A handler must not keep a payload
 * past its call; the reader copies any incomplete tail.
 */
const RECV = Buffer.allocUnsafe(64 * 1024);

function frame(opcode: number, payload: Buffer): Buffer {
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x80 | opcode, 0x80 | n, 0, 0, 0, 0]) : n < 65536 ? Buffer.from([0x80 | opcode, 0x80 | 126, n >> 8, n & 255, 0, 0, 0, 0]) : Buffer.alloc(14);
  if (n >= 65536) {
    head[0] = 0x80 | opcode;
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}

export class LeanSocket {
  private sock: Socket | undefined;
  private buf: Buffer | undefined;
  private frag: Buffer[] | undefined;
  private upgraded = false;
  private done = false;

  constructor(private readonly h: LeanSocketHandler) {}

  open(o: { url: string; localAddress?: string; protocol?: string }): void {
    const u = new URL(o.url);
    const sock = connect({
      host: u.hostname,
      port: Number(u.port || (u.protocol === 'wss:' ? 443 : 80)),
      ...(o.localAddress ? { localAddress: o.localAddress } : {}),
      onread: {
        buffer: RECV,
        callback: (n: number) => {
          this.onData(RECV.subarray(0, n));
          return true;
        },
      },
    });
    this.sock = sock;
    sock.setNoDelay(true);
    sock.once('connect', () => {
      const key = randomBytes(16).toString('base64');
      sock.write(`GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n${o.protocol ? `Sec-WebSocket-Protocol: ${o.protocol}\r\n` : ''}\r\n`);
    });
    sock.on('error', (err) => this.finish(err));
    sock.on('close', () => this.finish(this.upgraded ? undefined : new Error('connection closed before the WebSocket upgrade')));
  }

  get isOpen(): boolean {
    return this.upgraded && !this.done;
  }

  sendText(text: string): void {
    if (this.isOpen) this.sock!.write(frame(1, Buffer.from(text)));
  }

  /** Close handshake (1000), then end. */
  close(): void {
    if (!this.sock || this.done) return;
    if (this.upgraded) this.sock.end(frame(8, Buffer.from([0x03, 0xe8])));
    else this.sock.destroy();
    this.finish(undefined, 1000);
  }

  /** Drop the TCP connection with no close frame (what a network failure looks like). */
  destroy(): void {
    this.sock?.destroy();
    this.finish(undefined, 1006);
  }

  private finish(err: Error | undefined, code?: number): void {
    if (this.done) return;
    this.done = true;
    this.buf = undefined;
    this.frag = undefined;
    this.h.closed(err, code);
  }

  private onData(chunk: Buffer): void {
    let buf = this.buf ? Buffer.concat([this.buf, chunk]) : chunk;
    this.buf = undefined;
    if (!this.upgraded) {
      const end = buf.indexOf(CRLF2);
      if (end < 0) {
        if (buf.length > 16_384) return this.fail('upgrade response too large');
        this.buf = Buffer.from(buf);
        return;
      }
      const status = buf.toString('latin1', 0, Math.min(end, 64));
      if (!/^HTTP\/1\.1 101 /.test(status)) return this.fail(`upgrade refused: ${status.split('\r\n')[0]}`);
      this.upgraded = true;
      buf = buf.subarray(end + 4);
      this.h.open();
      if (this.done) return;
    }
    let off = 0;
    while (buf.length - off >= 2) {
      const b0 = buf[off]!;
      const b1 = buf[off + 1]! & 0x7f;
      let hlen = 2;
      let len = b1;
      if (b1 === 126) {
        if (buf.length - off < 4) break;
        len = buf.readUInt16BE(off + 2);
        hlen = 4;
      } else if (b1 === 127) {
        if (buf.length - off < 10) break;
        len = Number(buf.readBigUInt64BE(off + 2));
        hlen = 10;
      }
      if (buf.length - off < hlen + len) break;
      const payload = buf.subarray(off + hlen, off + hlen + len);
      off += hlen + len;
      this.onFrame(b0 & 0x80, b0 & 0x0f, payload);
      if (this.done) return;
    }
    // Keep only the incomplete tail, copied: the shared receive buffer is overwritten by the next read.
    if (off < buf.length) this.buf = Buffer.from(buf.subarray(off));
  }

  private onFrame(fin: number, opcode: number, payload: Buffer): void {
    switch (opcode) {
      case 0x9:
        this.sock!.write(frame(0xa, payload));
        return;
      case 0xa:
        return;
      case 0x8: {
        const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
        this.sock!.end(frame(8, payload.subarray(0, 2)));
        this.finish(code === 1000 || code === 1001 ? undefined : new Error(`closed by the server (${code})`), code);
        return;
      }
      case 0x0:
      case 0x1:
      case 0x2: {
        if (!fin) {
          (this.frag ??= []).push(Buffer.from(payload));
          return;
        }
        if (this.frag) {
          this.frag.push(payload);
          const whole = Buffer.concat(this.frag);
          this.frag = undefined;
          this.h.message(whole);
        } else this.h.message(payload);
        return;
      }
      default:
        this.fail(`unknown opcode ${opcode}`);
    }
  }

  private fail(why: string): void {
    this.sock?.destroy();
    this.finish(new Error(why));
  }
}
