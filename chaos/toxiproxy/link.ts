import type { Socket } from 'node:net';
import { createStage, EOF, type Item, type Sink, type Stage, type StageHost } from './stages.ts';
import type { ToxicRecord } from './toxics.ts';
import type { Direction } from './types.ts';

/** Shared by every link of one server: randomness, clock, buffer bound and timer accounting. */
export interface LinkEnv extends Pick<StageHost, 'rng' | 'now' | 'timers'> {
  maxBufferedBytes: number;
  /** Bind wildcard/non-loopback listens and dial non-loopback upstreams (off: loopback only). */
  allowPublic: boolean;
}

/**
 * One direction of one proxied connection (Toxiproxy `ToxicLink`): reads `source`, runs each
 * chunk through the direction's toxics in order, writes `dest`.
 *
 * Backpressure: `pending` counts bytes read but not yet written or dropped; together with the
 * destination's own write buffer it is kept under `maxBufferedBytes` by pausing the source, so
 * a slow reader or a stalling toxic pushes back over TCP instead of growing memory.
 */
export class Link {
  private stages: Stage[] = [];
  private readonly writer: Sink = { accept: (item) => this.write(item) };
  private head: Sink = this.writer;
  private pending = 0;
  private paused = false;
  private sourceDone = false;
  /** EOF reached the writer: the destination was ended. */
  private ended = false;
  /** What this link's stages see: the server's clock, randomness and timers, and this link's bytes and sockets. */
  private readonly host: StageHost;

  constructor(
    private readonly source: Socket,
    private readonly dest: Socket,
    toxics: readonly ToxicRecord[],
    private readonly env: LinkEnv,
    onReset: () => void,
  ) {
    const release = (bytes: number) => {
      this.pending -= bytes;
      this.maybeResume();
    };
    this.host = { now: () => env.now(), rng: () => env.rng(), timers: env.timers, release, reset: onReset };
    for (const t of toxics) this.addToxic(t);
    dest.on('drain', this.maybeResume);
  }

  readonly onData = (data: Buffer): void => {
    if (this.sourceDone) return;
    if (this.head === this.writer) {
      // No toxic on this link: skip the chunk wrapper and the clock (the benchmark's hot path).
      if (!this.ended && !this.dest.destroyed) this.dest.write(data);
    } else {
      this.pending += data.length;
      this.head.accept({ data, at: this.env.now() });
    }
    if (!this.paused && this.pending + this.dest.writableLength > this.env.maxBufferedBytes) {
      this.paused = true;
      this.source.pause();
    }
  };

  /** The source hit EOF, errored or closed: EOF follows the data already in the chain. */
  readonly onSourceDone = (): void => {
    if (this.sourceDone) return;
    this.sourceDone = true;
    this.head.accept(EOF);
  };

  addToxic(toxic: ToxicRecord): void {
    this.stages.push(createStage(toxic, this.host));
    this.rewire();
  }

  updateToxic(toxic: ToxicRecord): void {
    this.stages.find((s) => s.name === toxic.name)?.run(toxic);
  }

  /** Splice the stage out, handing what it held to the next stage first, so nothing is lost or reordered. */
  removeToxic(name: string): void {
    const i = this.stages.findIndex((s) => s.name === name);
    const stage = this.stages[i];
    if (!stage) return;
    const { held, close } = stage.remove();
    this.stages.splice(i, 1);
    this.rewire();
    const next = this.stages[i] ?? this.writer;
    for (const item of held) next.accept(item);
    if (close) next.accept(EOF);
  }

  dispose(): void {
    for (const s of this.stages) s.dispose();
    this.stages = [];
    this.dest.off('drain', this.maybeResume);
  }

  private rewire(): void {
    this.stages.forEach((s, i) => (s.next = this.stages[i + 1] ?? this.writer));
    this.head = this.stages[0] ?? this.writer;
  }

  private write(item: Item): void {
    if (item === EOF) return this.finish();
    this.pending -= item.data.length;
    if (!this.ended && !this.dest.destroyed) this.dest.write(item.data);
    if (this.paused) this.maybeResume();
  }

  /** No half-close (Toxiproxy closes the destination fully): FIN after the flush, then destroy. */
  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.dest.destroyed) return;
    this.dest.once('finish', () => this.dest.destroy());
    this.dest.end();
  }

  private readonly maybeResume = (): void => {
    if (!this.paused || this.pending + this.dest.writableLength > this.env.maxBufferedBytes / 2) return;
    this.paused = false;
    if (!this.source.destroyed) this.source.resume();
  };
}

/** One accepted client socket and its upstream socket: two independent links. */
export class Connection {
  /** upstream reads the client and writes the server; downstream the other way. */
  readonly links: Record<Direction, Link>;
  private open = 2;

  constructor(
    private readonly client: Socket,
    private readonly server: Socket,
    toxics: Record<Direction, readonly ToxicRecord[]>,
    env: LinkEnv,
    private readonly onClosed: (c: Connection) => void,
  ) {
    this.links = {
      upstream: new Link(client, server, toxics.upstream, env, this.reset),
      downstream: new Link(server, client, toxics.downstream, env, this.reset),
    };
    this.wire(client, this.links.upstream);
    this.wire(server, this.links.downstream);
  }

  /** RST both sockets (SO_LINGER 0 + close in Go). */
  readonly reset = (): void => {
    for (const s of [this.client, this.server]) if (!s.destroyed) s.resetAndDestroy();
  };

  /** Disable/delete/restart: close both sockets now, buffered data is discarded. */
  close(): void {
    for (const l of Object.values(this.links)) l.dispose();
    this.client.destroy();
    this.server.destroy();
  }

  private wire(socket: Socket, readLink: Link): void {
    // Peer errors (ECONNRESET, EPIPE) end the link like EOF does; they must never crash the proxy.
    socket.on('error', () => {});
    socket.on('data', readLink.onData);
    socket.on('end', readLink.onSourceDone);
    socket.on('close', () => {
      readLink.onSourceDone();
      if (--this.open === 0) {
        // Both sockets are closed already: close() only disposes the links.
        this.close();
        this.onClosed(this);
      }
    });
    socket.resume();
  }
}
