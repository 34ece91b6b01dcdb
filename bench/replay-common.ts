import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as hdr from 'hdr-histogram-js';
import type { ChildToParent, ParentToChild } from './replay-clients.ts';

/** Shared plumbing of the replay benchmarks: client child processes, RSS sampling, histogram merge. */

const CLIENT_ENTRY = fileURLToPath(new URL('./replay-clients.ts', import.meta.url));
/** Connections per client process: well under the ~19,000 fds a process may use here. */
export const PER_PROCESS = 5000;

export function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Poll a process's RSS; `peak` is the maximum seen since `start()`. */
export function rssSampler(pid: number, everyMs = 200) {
  let peak = 0;
  let timer: NodeJS.Timeout | undefined;
  return {
    start() {
      peak = rssBytes(pid);
      timer = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), everyMs);
    },
    stop() {
      if (timer) clearInterval(timer);
      return peak;
    },
    get peak() {
      return Math.max(peak, rssBytes(pid));
    },
  };
}

const LIVE = new Set<ChildProcess>();
process.once('exit', () => LIVE.forEach((c) => c.kill('SIGKILL')));

export class ClientProcess {
  readonly child: ChildProcess;
  private readonly inbox: ChildToParent[] = [];
  private waiters: Array<() => void> = [];

  constructor() {
    this.child = fork(CLIENT_ENTRY, [], { execArgv: ['--import', 'tsx', '--max-old-space-size=4096'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (m: ChildToParent) => {
      if (m.type === 'progress') return;
      this.inbox.push(m);
      const w = this.waiters;
      this.waiters = [];
      w.forEach((f) => f());
    });
    LIVE.add(this.child);
    this.child.once('exit', () => LIVE.delete(this.child));
  }

  send(m: ParentToChild): void {
    this.child.send(m);
  }

  async next<T extends ChildToParent['type']>(type: T, timeoutMs = 120_000): Promise<Extract<ChildToParent, { type: T }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.inbox.findIndex((m) => m.type === type);
      if (i >= 0) return this.inbox.splice(i, 1)[0] as Extract<ChildToParent, { type: T }>;
      if (Date.now() > deadline) throw new Error(`client process: no "${type}" within ${timeoutMs} ms`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, 500);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }
}

/** Open `total` connections spread over ceil(total / PER_PROCESS) processes, each on its own range of 127.0.x.y (≤ 500 sockets per source address). */
export async function openClients(opts: { mode: string; url: string; total: number; streams: string[]; concurrency?: number }) {
  const n = Math.max(1, Math.ceil(opts.total / PER_PROCESS));
  const procs = Array.from({ length: n }, () => new ClientProcess());
  const t0 = Date.now();
  let offset = 0;
  procs.forEach((p, i) => {
    const count = Math.floor(opts.total / n) + (i < opts.total % n ? 1 : 0);
    const localAddresses = Array.from({ length: Math.max(1, Math.ceil(count / 500)) }, (_, k) => `127.0.${10 + i}.${10 + k}`);
    p.send({ type: 'start', mode: opts.mode, url: opts.url, count, streams: opts.streams, offset, localAddresses, concurrency: opts.concurrency ?? 100 });
    offset += count;
  });
  const ready = await Promise.all(procs.map((p) => p.next('ready', 300_000)));
  return {
    procs,
    connected: ready.reduce((a, r) => a + r.connected, 0),
    failed: ready.reduce((a, r) => a + r.failed, 0),
    connectMs: Date.now() - t0,
    /** Counters since the previous mark, merged over processes. */
    async mark() {
      procs.forEach((p) => p.send({ type: 'mark' }));
      const counts = await Promise.all(procs.map((p) => p.next('counts')));
      const h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000, numberOfSignificantValueDigits: 3 });
      const disconnects: Record<string, number> = {};
      for (const c of counts) {
        h.add(hdr.decodeFromCompressedBase64(c.histogram));
        for (const [k, v] of Object.entries(c.disconnects)) disconnects[k] = (disconnects[k] ?? 0) + v;
      }
      return { received: counts.reduce((a, c) => a + c.received, 0), open: counts.reduce((a, c) => a + c.open, 0), histogram: h, disconnects };
    },
    async close() {
      procs.forEach((p) => p.send({ type: 'close' }));
      await Promise.all(procs.map((p) => p.next('closed', 30_000).catch(() => undefined)));
      procs.forEach((p) => p.child.kill('SIGKILL'));
    },
  };
}

export const mib = (b: number) => Math.round((b / 1048576) * 10) / 10;
