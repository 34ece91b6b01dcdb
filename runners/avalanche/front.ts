import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';

/** What the front did, for the result: how clients were spread and how often a node refused. */
export interface FrontReport {
  url: string;
  /** Connections handed to each node over the run. */
  assigned: number[];
  /** Connections open on each node when the restart began (the spread the restart hit). */
  activeAtRestart: number[];
  /** Connects a node refused, retried on the next node. */
  failovers: number;
  /** Client connections closed because no node accepted them. */
  rejected: number;
  /**
   * The front's own descriptor limit (EMFILE/ENFILE) on a node-side connect or on accept: the
   * runner's limit, not the target's. (libuv hides most accept-side EMFILE by closing the
   * connection; the node-side connect that follows an accept is where it shows.)
   */
  fdErrors: number;
}

/**
 * A TCP front for K nodes of one service, as a platform's load balancer: one address for every
 * client and the publisher, each new connection goes to the next node round-robin, and a node
 * that refuses (killed, restarting) is skipped for the next. When a node's side of a connection
 * closes, the client's side is closed too, so its library reconnects through the front and lands
 * on a live node. Plain TCP: WebSocket and HTTP pass through untouched (every target here speaks
 * WebSocket only, so no sticky sessions are needed).
 */
export class NodeFront {
  private readonly server: Server;
  private readonly targets: { host: string; port: number }[];
  private readonly active: Set<Socket>[];
  private next = 0;
  readonly report: FrontReport;

  private constructor(urls: readonly string[]) {
    this.targets = urls.map((u) => new URL(u)).map((u) => ({ host: u.hostname, port: Number(u.port) || 80 }));
    this.active = urls.map(() => new Set());
    this.report = { url: '', assigned: urls.map(() => 0), activeAtRestart: urls.map(() => 0), failovers: 0, rejected: 0, fdErrors: 0 };
    this.server = createServer({ noDelay: true }, (client) => this.accept(client));
  }

  static async start(urls: readonly string[]): Promise<NodeFront> {
    const f = new NodeFront(urls);
    // once() rejects on 'error' and leaves no listener behind.
    await once(f.server.listen(0, '127.0.0.1'), 'listening');
    f.server.on('error', () => f.report.fdErrors++);
    f.report.url = `http://127.0.0.1:${(f.server.address() as { port: number }).port}`;
    return f;
  }

  get url(): string {
    return this.report.url;
  }

  /** Open connections per node now. */
  activeCounts(): number[] {
    return this.active.map((s) => s.size);
  }

  markRestart(): void {
    this.report.activeAtRestart = this.activeCounts();
  }

  private accept(client: Socket): void {
    client.pause();
    client.on('error', () => {});
    const first = this.next++ % this.targets.length;
    this.tryNode(client, first, 0);
  }

  private tryNode(client: Socket, n: number, tried: number): void {
    if (client.destroyed) return;
    if (tried >= this.targets.length) {
      this.report.rejected++;
      client.destroy();
      return;
    }
    const t = this.targets[n]!;
    const up = connect({ host: t.host, port: t.port, noDelay: true });
    let open = false;
    up.once('connect', () => {
      open = true;
      if (client.destroyed) return void up.destroy();
      this.report.assigned[n]!++;
      const set = this.active[n]!;
      set.add(client);
      const end = () => {
        set.delete(client);
        client.destroy();
        up.destroy();
      };
      up.on('close', end);
      client.on('close', end);
      up.pipe(client);
      client.pipe(up);
      client.resume();
    });
    up.on('error', (err: NodeJS.ErrnoException) => {
      if (open) return; // 'close' follows and ends both sides
      if (err.code === 'EMFILE' || err.code === 'ENFILE') {
        this.report.fdErrors++;
        return void client.destroy(); // no node is at fault: do not try the next one
      }
      this.report.failovers++;
      this.tryNode(client, (n + 1) % this.targets.length, tried + 1);
    });
  }

  async close(): Promise<void> {
    for (const set of this.active) for (const s of set) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
