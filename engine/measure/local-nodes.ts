import { until } from '../../lib/time.ts';
import { respawn, startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { assertAvailable } from '../targets/index.ts';
import type { TargetDefinition } from '../targets/types.ts';

/** One node's restart, on the runner's clock (ms since epoch). */
export interface NodeRestart {
  node: number;
  port: number;
  oldPid: number;
  newPid: number | null;
  signal: NodeJS.Signals | null;
  /** When the runner sent the signal (null when something else stopped the node). */
  signalAt: number | null;
  exitedAt: number | null;
  listeningAt: number | null;
  /** First known down moment (signal, else exit) to listening again. */
  downMs: number | null;
  respawnAttempts: number;
  error?: string;
}

/**
 * The target a restart runner (avalanche, deploy-impact) works on: the running one at `url`
 * (trailing slashes off), or `nodes` local instances it starts, with the run's broadcast key.
 */
export async function nodesOrUrl(target: TargetDefinition, o: { url?: string | undefined; nodes?: number; workers?: number; broadcastKey?: string | undefined }): Promise<{ nodes: LocalNodes | undefined; urls: string[] }> {
  if (o.url) return { nodes: undefined, urls: [o.url.replace(/\/+$/, '')] };
  const nodes = await LocalNodes.start(target, o.nodes ?? 1, { ...(o.workers !== undefined ? { workers: o.workers } : {}), ...(o.broadcastKey ? { env: { BROADCAST_KEY: o.broadcastKey } } : {}) });
  return { nodes, urls: nodes.urls };
}

/**
 * K local instances of a target on their own ports, each restartable on its port. With
 * `supervise`, a node that exits on its own (a `command` or `hook` restart that killed it) is
 * started again, as the platform's process manager would.
 */
export class LocalNodes {
  readonly handles: ServiceHandle[] = [];
  /** Restarts the supervisor performed (exits the runner did not cause). */
  readonly supervised: NodeRestart[] = [];
  private supervising = false;
  private closing = false;
  private readonly restarting = new Set<number>();

  private constructor() {}

  static async start(target: TargetDefinition, k: number, opts: { workers?: number; env?: Record<string, string> } = {}): Promise<LocalNodes> {
    assertAvailable(target);
    const svc = target.service!;
    const nodes = new LocalNodes();
    const args = [...svc.args, ...((opts.workers ?? 1) > 1 ? ['--workers', String(opts.workers)] : [])];
    try {
      for (let i = 0; i < k; i++) nodes.adopt(i, await startService(svc.name, { args, ...(opts.env ? { env: opts.env } : {}) }));
    } catch (err) {
      await nodes.close();
      throw err;
    }
    return nodes;
  }

  get urls(): string[] {
    return this.handles.map((h) => h.httpUrl);
  }

  supervise(on: boolean): void {
    this.supervising = on;
  }

  private adopt(i: number, h: ServiceHandle): void {
    this.handles[i] = h;
    h.child.once('exit', () => {
      if (this.closing || !this.supervising || this.restarting.has(i) || this.handles[i] !== h) return;
      const exitedAt = Date.now();
      this.restarting.add(i);
      const rec: NodeRestart = { node: i, port: h.port, oldPid: h.pid, newPid: null, signal: null, signalAt: null, exitedAt, listeningAt: null, downMs: null, respawnAttempts: 0 };
      this.supervised.push(rec);
      void respawn(h)
        .then(({ handle, listeningAt, attempts }) => {
          Object.assign(rec, { newPid: handle.pid, listeningAt, downMs: listeningAt - exitedAt, respawnAttempts: attempts });
          this.adopt(i, handle);
        })
        .catch((err: Error) => (rec.error = `respawn failed: ${err.message}`))
        .finally(() => this.restarting.delete(i));
    });
  }

  /**
   * Restart node i: SIGKILL, or SIGTERM and wait for the exit (SIGKILL after `graceMs`), then start
   * it again on its port. Never throws: a failure is recorded in the result.
   */
  async restartNode(i: number, signal: 'SIGKILL' | 'SIGTERM', graceMs: number): Promise<NodeRestart> {
    const h = this.handles[i]!;
    this.restarting.add(i);
    const rec: NodeRestart = { node: i, port: h.port, oldPid: h.pid, newPid: null, signal, signalAt: Date.now(), exitedAt: null, listeningAt: null, downMs: null, respawnAttempts: 0 };
    try {
      if (signal === 'SIGKILL') await h.kill('SIGKILL');
      else await h.stop(graceMs);
      await h.exited;
      rec.exitedAt = Date.now();
      const { handle, listeningAt, attempts } = await respawn(h);
      this.adopt(i, handle);
      Object.assign(rec, { newPid: handle.pid, listeningAt, downMs: listeningAt - rec.signalAt!, respawnAttempts: attempts });
    } catch (err) {
      rec.error = `node ${i} (port ${h.port}): ${(err as Error).message}`;
    } finally {
      this.restarting.delete(i);
    }
    return rec;
  }

  /** Wait (bounded) for supervised respawns still in flight. */
  async settleSupervised(timeoutMs = 15_000): Promise<void> {
    await until(() => this.restarting.size === 0, timeoutMs, undefined, 50);
  }

  async close(graceMs = 3000): Promise<void> {
    this.closing = true;
    await Promise.all(this.handles.map((h) => h?.stop(graceMs).catch(() => 0)));
  }
}
