import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../lib/time.ts';
import type { ClusterSummary } from './cluster/stats.ts';
import { childPids, isAlive } from './process-info.ts';
import { contractClient, type ContractClient, type ReferenceServer } from './reference-contract.ts';
import { startService, type ServiceHandle } from './spawn.ts';
import { pinnedPoster, postFresh, type Poster } from './test-clients.ts';

/**
 * For test files only (it declares suites): `--workers 2` of a reference server, held to one
 * contract for ws and Socket.IO on the real entry point (primary + two workers, port 0, real
 * clients): clients spread over both workers and /metrics sums them; broadcasts posted on fresh
 * connections (so round-robin lands them on both workers) reach every client once, in order;
 * whispers cross workers; a killed worker is replaced; SIGTERM stops everything with exit 0.
 */

type Metrics = { connections: number; cluster?: (ClusterSummary & { respawns: number; spawnFailures: number }) | null };
const metricsOf = async (h: ServiceHandle) => (await (await fetch(`${h.httpUrl}/metrics`)).json()) as Metrics;

export function describeClusterContract(name: ReferenceServer, args: string[] = []): void {
  const clients: ContractClient[] = [];
  const open = async (h: ServiceHandle, n: number, stream: string) => {
    const cs = await Promise.all(Array.from({ length: n }, () => contractClient(name, h)));
    clients.push(...cs);
    for (const c of cs) await c.subscribe(stream);
    return cs;
  };
  afterAll(() => {
    for (const c of clients.splice(0)) c.close();
  });

  describe(`${name} --workers 2`, () => {
    let h: ServiceHandle;
    beforeAll(async () => {
      h = await startService(name, { args: [...args, '--workers', '2'] });
    });
    afterAll(async () => {
      await h.stop();
    });

    it('clients spread over both workers; /metrics sums connections and RSS over them', async () => {
      const workers = childPids(h.pid);
      expect(workers).toHaveLength(2);
      // SO_REUSEPORT (uws) places a connection by a hash of its address: n connections all land on
      // one of two workers with chance 2^(1-n), 0.8 % at 8 (a flake seen), 0.003 % at 16.
      await open(h, 16, 'spread');
      const m = await poll(h, (x) => x.cluster?.connections === 16);
      const c = m.cluster!;
      expect(c.workers).toBe(2);
      expect(c.perWorker.map((w) => w.pid).sort()).toEqual([...workers].sort());
      for (const w of c.perWorker) expect(w.connections).toBeGreaterThan(0);
      expect(c.rssBytes).toBe(c.primaryRssBytes + c.perWorker.reduce((n, w) => n + w.rssBytes, 0));
      // The answering worker's own figure stays its own: the sum is under `cluster`.
      expect(m.connections).toBeLessThan(16);
    });

    it('broadcasts alternating between both workers reach every client on both exactly once, in order', async () => {
      const cs = await open(h, 6, 'order');
      // One keep-alive connection to each worker: consecutive POSTs land on different workers
      // back to back, the race an answer given before the other worker emitted would lose.
      const [a, b] = await pinnedToBothWorkers(h);
      const sent: string[] = [];
      const post = async (via: Poster | undefined, body: { stream: string; data: string }[]) => {
        sent.push(...body.map((x) => x.data));
        expect(via ? (await via.post(JSON.stringify(body))).status : await postFresh(h.port, '/_broadcast', JSON.stringify(body))).toBe(201);
      };
      for (let i = 1; i <= 300; i++) await post(i % 2 ? a : b, [{ stream: 'order', data: String(i) }]);
      await post(b, Array.from({ length: 10 }, (_, i) => ({ stream: 'order', data: `b${i}` })));
      for (let i = 1; i <= 6; i++) await post(undefined, [{ stream: 'order', data: `f${i}` }]);
      a.close();
      b.close();
      await waitUntil(() => cs.every((c) => c.received() >= sent.length), 10_000, 'every broadcast everywhere');
      await new Promise((r) => setTimeout(r, 200)); // a duplicate would arrive late
      for (const c of cs) expect(c.data()).toEqual(sent);
    });

    it('a whisper reaches the stream\'s other subscribers on both workers once, not its sender', async () => {
      const cs = await open(h, 6, 'talk');
      await poll(h, (x) => (x.cluster?.perWorker ?? []).every((w) => w.connections > 0));
      cs[0]!.whisper('hi');
      await waitUntil(() => cs.slice(1).every((c) => c.whispers().length >= 1), 5000, 'whisper everywhere');
      await new Promise((r) => setTimeout(r, 200));
      expect(cs[0]!.whispers()).toEqual([]);
      for (const c of cs.slice(1)) expect(c.whispers()).toEqual(['hi']);
    });
  });

  describe(`${name} --workers 2: a worker dies, then SIGTERM`, () => {
    it('a killed worker is replaced and the new one serves broadcasts; SIGTERM stops every process with exit 0', async () => {
      const h = await startService(name, { args: [...args, '--workers', '2'] });
      try {
        const first = childPids(h.pid);
        process.kill(first[0]!, 'SIGKILL');
        await waitUntil(() => {
          const now = childPids(h.pid);
          return now.length === 2 && !now.includes(first[0]!);
        }, 20_000, 'a replacement worker', 50);
        const m = await poll(h, (x) => x.cluster?.workers === 2 && x.cluster.perWorker.length === 2);
        expect(m.cluster!.respawns).toBe(1);
        // 16, not 6: all on one worker by SO_REUSEPORT's hash had a 3 % chance (a flake seen in a full run).
        const cs = await open(h, 16, 'after');
        await poll(h, (x) => x.cluster?.connections === 16 && x.cluster.perWorker.every((w) => w.connections > 0));
        for (let i = 1; i <= 4; i++) expect(await postFresh(h.port, '/_broadcast', JSON.stringify({ stream: 'after', data: String(i) }))).toBe(201);
        await waitUntil(() => cs.every((c) => c.received() >= 4), 10_000, 'broadcasts after the respawn');
        for (const c of cs) expect(c.data()).toEqual(['1', '2', '3', '4']);
        const all = childPids(h.pid);
        await h.stop(10_000);
        expect({ code: h.child.exitCode, signal: h.child.signalCode }).toEqual({ code: 0, signal: null });
        for (const p of all) expect(isAlive(p)).toBe(false);
      } finally {
        await h.kill();
      }
    });
  });
}

/** /metrics, polled until `ok` holds (workers report once a second); throws with the last answer after 8 s. */
async function poll(h: ServiceHandle, ok: (m: Metrics) => boolean, ms = 8000): Promise<Metrics> {
  const until = Date.now() + ms;
  let last: Metrics | undefined;
  while (Date.now() < until) {
    last = await metricsOf(h).catch(() => undefined);
    if (last && ok(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`cluster metrics never matched; last: ${JSON.stringify(last?.cluster)}`);
}

/** Two keep-alive posters answered by different workers (round-robin accept: a few tries at most). */
async function pinnedToBothWorkers(h: ServiceHandle): Promise<[Poster, Poster]> {
  const probe = JSON.stringify({ stream: 'probe', data: 'x' });
  const a = pinnedPoster(h.port, '/_broadcast');
  const pa = (await a.post(probe)).pid;
  for (let i = 0; i < 10; i++) {
    const b = pinnedPoster(h.port, '/_broadcast');
    if ((await b.post(probe)).pid !== pa) return [a, b];
    b.close();
  }
  throw new Error('every connection landed on one worker');
}
