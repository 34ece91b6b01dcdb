/**
 * What one Connection needs from the socket under it, whichever library owns that socket (ws over
 * node:net, or uWebSockets.js). One stateless object per transport, called with the socket as
 * first argument: a connection holds its native socket, never a wrapper or closures, so the
 * transport seam costs no object per connection (only the two small fields the Connection keeps
 * for `sendNow`: 16 bytes).
 *
 * Frames are encoded by the transport (`encode`) once per message and shared by every receiver:
 * on ws a complete WebSocket frame written straight to the TCP socket (protocol/wsframe.ts), on
 * uWS the payload bytes uWS frames itself.
 */
export interface SocketOps<S = unknown> {
  readonly name: TransportName;
  /**
   * Fan-out must leave the library's own callback (Hub.queue): uWS corks one socket per loop, the
   * one whose callback runs (a publish's HTTP request), so inside it every WebSocket `cork` is
   * void and each frame is a syscall of its own.
   */
  readonly deferFanOut: boolean;
  /** A JSON text message as the bytes `write` takes (built once, shared by every receiver). */
  encode(payload: string): Buffer;
  /** The socket still takes frames (open, not closing). */
  writable(s: S): boolean;
  /** One frame from `encode`; never refused: the caller bounds the buffer (`buffered`, Outbox). */
  write(s: S, frame: Buffer): void;
  /**
   * Where the library says at each send whether it kept bytes buffered (uWS): send one frame now,
   * outside any `cork`, and answer true when nothing was left buffered. The Connection keeps that
   * answer on itself, so while its socket keeps up a delivery reads no per-socket state of the
   * library (`writable`, `buffered`, the batch; uWS keeps them apart from the socket object):
   * -7 % user CPU per delivery in a paired S3 run (docs/performance.md, issue 39). Absent where
   * the library cannot say (ws).
   */
  sendNow?(s: S, frame: Buffer): boolean;
  /** Bytes written but not yet handed to the kernel. */
  buffered(s: S): number;
  /** Call `cb` once, when the socket has written some of its buffer out (or at once if it is below its own mark). */
  awaitDrain(s: S, cb: () => void): void;
  cancelDrain(s: S, cb: () => void): void;
  /** Hold writes until `uncork` (nestable): the frames between leave in one write. */
  cork(s: S): void;
  uncork(s: S): void;
  /** Stop / restart reading the client (TCP pushes back). A no-op where the library cannot (uWS v20.30). */
  pause(s: S): void;
  resume(s: S): void;
  /**
   * The library's own publish/subscribe, where it has one (uWS topics): the hub then hands each
   * data frame to the library once per group and the library writes it to every member in native
   * code (hub/subscription.ts, Group.nat). Absent on ws.
   */
  readonly topics?: TopicOps<S>;
  /** Send `frame` and a close frame with `code` in one write, then close cleanly. */
  close(s: S, code: number, frame: Buffer): void;
  /** Cut the TCP connection now (no close frame); a no-op on a socket already gone. */
  terminate(s: S): void;
}

/**
 * A library's topics. Frames published to a topic wait in the library until the end of the loop
 * iteration or the member's next send, whichever comes first (uWS writes a socket's published
 * frames before any frame sent to it, in a write of their own), so a member's frames stay in the
 * order they were given; frames published to one socket in one iteration leave in one write.
 */
export interface TopicOps<S = unknown> {
  publish(topic: string, frame: Buffer): void;
  subscribe(s: S, topic: string): void;
  /** Frames already published to the socket are still written (see the uWS transport's anchor). */
  unsubscribe(s: S, topic: string): void;
  /** Bytes the library holds for the socket, published frames included (a native call: not per delivery). */
  buffered(s: S): number;
}

export type TransportName = 'ws' | 'uws';
