import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { until } from '../../lib/time.ts';
import { describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { killTree, processTree } from '../../services/common/process-info.ts';
import { localListener, processTreeUsage, runtimeProcesses, startTargetSampler, watchTarget } from './target-usage.ts';
import { startService } from '../../services/common/spawn.ts';

/** A real `/metrics` endpoint answering after `delayMs`. */
async function metricsServer(delayMs: number, body: object) {
  let answered = 0;
  const server = createServer((_req, res) => void setTimeout(() => res.end(JSON.stringify(body), () => answered++), delayMs));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, answered: () => answered, close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

describe.skipIf(process.platform !== 'linux')('watchTarget', () => {
  it('samples a real process\'s RSS and CPU from /proc, times relative to publish start', async () => {
    const start = Date.now();
    const w = watchTarget(process.pid, 50);
    // Busy for a while so CPU shows, yielding so the sampler runs.
    for (let i = 0; i < 8; i++) {
      const until = Date.now() + 40;
      while (Date.now() < until);
      await new Promise((r) => setTimeout(r, 20));
    }
    const u = w.stop(start)!;
    expect(u.tSec.length).toBeGreaterThan(2);
    expect(u.tSec[0]).toBeGreaterThan(0);
    expect(Math.min(...u.rssMb)).toBeGreaterThan(10);
    expect(Math.max(...u.cpuPct)).toBeGreaterThan(10);
  });

  it('a pid that does not exist yields no series', async () => {
    const w = watchTarget(2 ** 22 + 12345, 20);
    await new Promise((r) => setTimeout(r, 80));
    expect(w.stop(0)).toBeNull();
  });
});

describe.skipIf(process.platform !== 'linux')('runtimeProcesses', () => {
  it('counts a process and its children running the same program, not a helper of another program', async () => {
    // A node parent with one node child and one `sleep` child (what a transpiler helper looks like).
    const code = "const {spawn}=require('child_process');spawn(process.execPath,['-e','setTimeout(()=>{},30000)'],{stdio:'ignore'});spawn('sleep',['30'],{stdio:'ignore'});setTimeout(()=>{},30000);process.stdout.write('up\\n')";
    const parent = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      await new Promise((r) => parent.stdout!.once('data', r));
      for (let i = 0; i < 50 && processTree(parent.pid!).length < 3; i++) await new Promise((r) => setTimeout(r, 20));
      expect(processTree(parent.pid!)).toHaveLength(3);
      expect(runtimeProcesses(parent.pid!)).toHaveLength(2);
      expect(runtimeProcesses(2 ** 22 + 12345)).toEqual([]);
    } finally {
      killTree(parent.pid);
    }
  });
});

describe('startTargetSampler', () => {
  it('reads connections from /metrics and, with a pid, RSS and CPU from the process tree instead', async () => {
    const m = await metricsServer(0, { connections: 7, rssBytes: 1, cpuPct: 2 });
    try {
      const remote = startTargetSampler({ url: m.url, everyMs: 30 });
      expect(remote.source).toBe('metrics');
      remote.start();
      // Until the server has answered three times (at most 5 s; a fixed 120 ms saw one answer on a loaded box).
      await until(() => m.answered() >= 3, 5000);
      await new Promise((r) => setTimeout(r, 30));
      const r = remote.stop();
      expect(r.metricsAnswered).toBeGreaterThan(1);
      expect(r.samples[0]).toMatchObject({ connections: 7, rssBytes: 1, cpuPct: 2 });

      const local = startTargetSampler({ url: m.url, pid: process.pid, everyMs: 30 });
      expect(local.source).toBe('proc-tree');
      local.start();
      await new Promise((r) => setTimeout(r, 120));
      const l = local.stop();
      expect(l.samples[0]!.connections).toBe(7);
      expect(l.samples[0]!.rssBytes).toBeGreaterThan(10 * 1024 * 1024);
      expect(l.samples[0]!.cpuPct).toBe(2); // no previous /proc sample yet: /metrics' figure stands
      expect(l.samples.at(-1)!.cpuPct).not.toBeNull();
    } finally {
      await m.close();
    }
  });

  it('takes no sample after stop, even one whose /metrics answer was still on its way', async () => {
    const m = await metricsServer(150, { connections: 1 });
    try {
      const s = startTargetSampler({ url: m.url, everyMs: 10 });
      s.start();
      await new Promise((r) => setTimeout(r, 50));
      const { samples } = s.stop();
      await new Promise((r) => setTimeout(r, 300));
      expect(samples).toHaveLength(0);
    } finally {
      await m.close();
    }
  });
});

describe.skipIf(process.platform !== 'linux')('a loopback target found from its listener', () => {
  it('a replay cluster named by a worker\'s /metrics pid is read from /proc of its whole tree; a pid claimed by another port\'s server is not believed', async () => {
    const svc = await startService('replay', { args: ['--workers', '2'] });
    const liar = await metricsServer(0, { pid: svc.pid, rssBytes: 1, connections: 0 });
    try {
      const m = (await (await fetch(`${svc.httpUrl}/metrics`)).json()) as { pid: number; cluster: { perWorker: { pid: number }[] } };
      // A worker answers; its listener is the primary's: the tree's root is the primary.
      expect(m.cluster.perWorker.map((w) => w.pid)).toContain(m.pid);
      expect(localListener(svc.httpUrl, m.pid)).toBe(svc.pid);
      const sampler = startTargetSampler({ url: svc.httpUrl });
      const base = await sampler.baseline();
      sampler.stop();
      expect(sampler.source).toBe('proc-tree');
      expect(sampler.pidFrom).toBe('listener');
      const tree = processTreeUsage(svc.pid)!.rssBytes;
      expect(Math.abs(base! - tree) / tree).toBeLessThan(0.05);
      // Deny by default: a /metrics naming the replay primary does not make its port that server's.
      expect(localListener(liar.url, svc.pid)).toBeUndefined();
      const lied = startTargetSampler({ url: liar.url });
      await lied.baseline(1);
      lied.stop();
      expect(lied.source).toBe('metrics');
      expect(localListener('http://10.0.0.1:80', svc.pid)).toBeUndefined();
    } finally {
      await liar.close();
      await svc.stop();
    }
  }, 60_000);

  it('a target whose first /metrics answer misses its deadline is still found from its listener (asked again)', async () => {
    // This test's own process holds the listener: it is the "target" whose tree is read.
    let asked = 0;
    const server = createServer((_req, res) => void setTimeout(() => res.end(JSON.stringify({ pid: process.pid, rssBytes: 1, connections: 0 })), asked++ === 0 ? 2500 : 0));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const sampler = startTargetSampler({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
      await sampler.baseline(1);
      sampler.stop();
      expect(asked).toBeGreaterThan(1);
      expect(sampler.pidFrom).toBe('listener');
      expect(sampler.source).toBe('proc-tree');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  }, 30_000);
  it('a server that answers no /metrics is found from the process holding its listener; one in this very process is refused (its tree would count the runner)', async () => {
    // A plain HTTP server, no /metrics, in a child process: found by its port alone.
    const child = spawn(process.execPath, ['-e', "require('http').createServer((q, s) => { s.statusCode = 404; s.end(); }).listen(0, '127.0.0.1', function () { console.log(this.address().port); })"], { stdio: ['ignore', 'pipe', 'inherit'] });
    const port = await new Promise<number>((r) => child.stdout.once('data', (b: Buffer) => r(Number(b.toString().trim()))));
    const own = createServer((_q, s) => void ((s.statusCode = 404), s.end()));
    await new Promise<void>((r) => own.listen(0, '127.0.0.1', r));
    const ownUrl = `http://127.0.0.1:${(own.address() as AddressInfo).port}`;
    try {
      expect(localListener(`http://127.0.0.1:${port}`, undefined)).toBe(child.pid);
      const sampler = startTargetSampler({ url: `http://127.0.0.1:${port}` });
      const base = await sampler.baseline(1);
      sampler.stop();
      expect(sampler.pidFrom).toBe('listener');
      expect(base).toBeGreaterThan(0);
      expect(localListener(ownUrl, undefined)).toBeUndefined();
      // A port nobody listens on finds nobody.
      await new Promise((r) => own.close(r));
      expect(localListener(ownUrl, undefined)).toBeUndefined();
    } finally {
      child.kill('SIGKILL');
      own.close();
    }
  }, 30_000);
});
