import { afterEach, describe, expect, it } from 'vitest';
import { sleep } from '../../lib/time.ts';
import { startWsRelay, type RelayHooks } from '../../services/common/test-clients.ts';
import { createReplayServer } from '../../services/replay-server/index.ts';
import { startTestServer } from '../../services/replay-server/testing.ts';
import { withTarget } from '../../engine/measure/local-target.ts';
import type { LossCause } from '../../engine/measure/loss-causes.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { parseJitterOptions } from './options.ts';
import type { JitterResult } from './result.ts';
import { renderReport } from '../../engine/pages/index.ts';
import { jitterModule } from './module.ts';
import { jitterReport } from './page.ts';
import { comparisonRows, formatComparison } from './table.ts';
import { runJitter } from './run.ts';

/**
 * Broken servers, one per loss cause, each run by the real jitter runner with real clients at
 * small scale: the run must book (nearly) all of its loss to the cause the server was broken for,
 * and the causes must sum to lostDeliveries.
 */
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const opts = (values: Record<string, unknown>) => parseJitterOptions({ values, origin: 'test' });

/** Share of the run's loss booked to `cause`, %, after checking the books balance. */
function share(r: JitterResult, cause: LossCause): number {
  const by = r.lossByCause ?? {};
  const total = Object.values(by).reduce((a, b) => a + b, 0);
  expect(total, JSON.stringify(by)).toBe(r.lostDeliveries);
  // LOSS_FIGURES=1 prints each run's books (the attributed shares quoted in reports).
  if (process.env.LOSS_FIGURES) console.log('FIGURE', r.target, cause, r.lostDeliveries, JSON.stringify(by), JSON.stringify(r.resumeOutcomes), r.replayedDeliveries);
  return r.lostDeliveries > 0 ? ((by[cause] ?? 0) / r.lostDeliveries) * 100 : 0;
}

/** A WebSocket relay in front of a real service (services/common/test-clients.ts), closed after each test. */
async function wsRelay(upstreamHttp: string, path: string, hooks: RelayHooks): Promise<string> {
  const relay = await startWsRelay(upstreamHttp, path, hooks);
  cleanup.push(relay.close);
  return relay.url;
}

/** The ws service behind a relay that drops the data frames of every seq divisible by `every`: a server that loses live frames. */
async function liveFrameDropper(upstreamHttp: string, every: number): Promise<{ url: string; dropped: () => number }> {
  let dropped = 0;
  const url = await wsRelay(upstreamHttp, '/ws', {
    fromServer: (m) => {
      const f = JSON.parse(m) as { data?: string };
      if (typeof f.data !== 'string' || (JSON.parse(f.data) as { seq: number }).seq % every !== 0) return [m];
      dropped++;
      return [];
    },
  });
  return { url, dropped: () => dropped };
}

describe('loss by cause: broken servers', () => {
  it.each(['ws', 'socketio'])('%s (at-most-once) with drops: all loss is offline with nothing to resume; every reconnect had nothing to resume', async (target) => {
    // Default Socket.IO comes back after its 2 s offline floor: settle long enough for that.
    const o = opts({ target, clients: 8, msgs: 100, interval: 60, jitter: 1, jitterMs: 600, settle: 4000, seed: 5 });
    const r = await withTarget(getTarget(target), undefined, (url) => runJitter(o, url).result);
    expect(r.lostDeliveries).toBeGreaterThan(0);
    expect(share(r, 'offline_nothing_to_resume')).toBe(100);
    expect(r.resumeOutcomes).toEqual({ nothing_to_resume: r.reconnects });
    expect(r.replayedDeliveries).toBe(0);
    // Shown: the bench table and the HTML report's summary get one row per cause that occurred.
    const row = ['Lost: lost while offline, nothing to resume', `${r.lostDeliveries.toLocaleString('en-US')} (100%)`];
    expect(comparisonRows([r])).toContainEqual(row);
    expect(comparisonRows([r]).filter((x) => x[0]!.startsWith('Lost: '))).toHaveLength(1);
    expect(comparisonRows([r])).toContainEqual(['Resume outcomes', `nothing to resume x${r.reconnects}`]);
    expect(formatComparison([r])).toContain('Lost: lost while offline, nothing to resume');
    const page = jitterReport([r], { command: 'test' });
    expect(page.summary).toContainEqual(row);
    const section = page.sections.find((x) => x.title === 'Lost by cause')!;
    expect(renderReport(r, { command: 'test' }, [jitterModule])).toContain(`Lost by cause: ${target}`);
    expect(section.charts.map((c) => c.series.map((x) => [x.label, Math.max(...x.values.map((v) => v ?? 0))]))).toEqual([[['lost while offline, nothing to resume', r.lostDeliveries]]]);
  }, 60_000);

  it('a server that drops 10% of live frames: lost while connected', async () => {
    await withTarget(getTarget('ws'), undefined, async (url) => {
      const relay = await liveFrameDropper(url, 10);
      const o = opts({ target: 'ws', clients: 6, msgs: 50, interval: 40, jitter: 0, settle: 500, seed: 9, broadcastUrl: `${url}/_broadcast` });
      const r = await runJitter(o, relay.url).result;
      expect(r.lostDeliveries).toBe(6 * 5);
      expect(relay.dropped()).toBe(6 * 5);
      expect(share(r, 'lost_while_connected')).toBe(100);
      expect(r.resumeOutcomes).toEqual({});
    });
  }, 60_000);

  it('replay server with a history of 1 message: the resumes are rejected as evicted, and the loss is history_evicted', async () => {
    const t = await startTestServer({ historyLimit: 1 });
    cleanup.push(() => t.close());
    const o = opts({ target: 'replay', clients: 8, msgs: 100, interval: 60, jitter: 1, jitterMs: 600, settle: 3000, seed: 5, reconnectStrategy: 'tuned' });
    const r = await runJitter(o, t.httpUrl).result;
    expect(r.lostDeliveries).toBeGreaterThan(0);
    expect(share(r, 'history_evicted'), JSON.stringify(r.lossByCause)).toBeGreaterThanOrEqual(99);
    expect(r.resumeOutcomes?.['rejected:history_evicted']).toBeGreaterThan(0);
  }, 60_000);

  it('a server with history disabled (every history request answered reject_history, no reason): history_rejected', async () => {
    // Session restore off, so every reconnect resubscribes and asks for its history by offset.
    const t = await startTestServer({ sessionTtlSec: 0 });
    cleanup.push(() => t.close());
    // History rides on `subscribe` (ext protocol) or comes as its own `history` command: the relay
    // strips the first and answers reject_history after the confirmation, and refuses the second.
    let refused = 0;
    const owed = new Set<string>();
    const reject = (identifier: string | undefined) => (refused++, JSON.stringify({ type: 'reject_history', identifier }));
    const url = await wsRelay(t.httpUrl, '/cable', {
      fromClient: (m) => {
        const f = JSON.parse(m) as { command?: string; identifier?: string; history?: unknown };
        if (f.command === 'history') return { reply: reject(f.identifier) };
        if (f.command !== 'subscribe' || f.history === undefined) return { forward: m };
        owed.add(f.identifier!);
        const { history: _drop, ...rest } = f;
        return { forward: JSON.stringify(rest) };
      },
      fromServer: (m) => {
        const f = JSON.parse(m) as { type?: string; identifier?: string };
        return f.type === 'confirm_subscription' && owed.delete(f.identifier!) ? [m, reject(f.identifier)] : [m];
      },
    });
    const o = opts({ target: 'replay', clients: 8, msgs: 100, interval: 60, jitter: 1, jitterMs: 600, settle: 3000, seed: 5, reconnectStrategy: 'tuned', broadcastUrl: `${t.httpUrl}/_broadcast` });
    const r = await runJitter(o, url).result;
    expect(r.published).toBe(100);
    expect(refused).toBeGreaterThan(0);
    expect(r.lostDeliveries).toBeGreaterThan(0);
    expect(share(r, 'history_rejected'), JSON.stringify(r.lossByCause)).toBeGreaterThanOrEqual(99);
    expect(r.resumeOutcomes?.['rejected:history_rejected']).toBeGreaterThan(0);
  }, 60_000);

  it('Socket.IO CSR with sessions kept 300 ms, offline for longer: the sessions expired', async () => {
    const o = opts({ target: 'socketio-csr', clients: 8, msgs: 100, interval: 60, jitter: 1, jitterMs: 600, settle: 4000, seed: 5 });
    const r = await withTarget(getTarget('socketio-csr'), undefined, (url) => runJitter(o, url).result, { SOCKETIO_CSR_MAX_MS: '300' });
    expect(r.lostDeliveries).toBeGreaterThan(0);
    expect(share(r, 'session_expired'), JSON.stringify(r.lossByCause)).toBeGreaterThanOrEqual(99);
    expect(r.resumeOutcomes).toEqual({ 'rejected:session_expired': r.reconnects });
  }, 60_000);

  it('clients dropped just before the end, with a settle shorter than their backoff: not back by the end', async () => {
    // The CLIENTS_OFFLINE_AT_END setup (runners/jitter/validity.test.ts): socketio-csr comes back
    // after 2 s ±50%; every client is dropped at 5-5.2 s of 5.2 s; a 400 ms settle ends the run first.
    const o = opts({ target: 'socketio-csr', clients: 6, msgs: 52, interval: 100, jitter: 0.2, settle: 400, seed: 3 });
    const r = await withTarget(getTarget('socketio-csr'), undefined, (url) => runJitter(o, url).result);
    expect(r.offlineAtEnd!.clients).toBeGreaterThan(0);
    expect(r.lossByCause?.not_back_by_end).toBe(r.offlineAtEnd!.lostDeliveries);
    expect(share(r, 'not_back_by_end')).toBeGreaterThanOrEqual(90);
  }, 60_000);

  it('a server that sends its clients away mid-run (disconnect with reconnect: false): they stay down, and what they miss is not back by the end', async () => {
    // The official client closes for good on a disconnect that says reconnect: false (the adapter
    // reports it as 'closed', the reason our own close uses). The relay says it in place of seq 30.
    const t = await startTestServer({});
    cleanup.push(() => t.close());
    let sentAway = 0;
    const url = await wsRelay(t.httpUrl, '/cable', {
      fromServer: (m) => {
        const f = JSON.parse(m) as { message?: { seq?: unknown } };
        if (f.message?.seq !== 30) return [m];
        sentAway++;
        return ['{"type":"disconnect","reason":"remote","reconnect":false}'];
      },
    });
    const o = opts({ target: 'replay', clients: 6, msgs: 60, interval: 40, jitter: 0, settle: 500, seed: 9, broadcastUrl: `${t.httpUrl}/_broadcast` });
    const r = await runJitter(o, url).result;
    expect(sentAway).toBe(6);
    expect(r.lostDeliveries).toBe(6 * 31);
    expect(share(r, 'not_back_by_end'), JSON.stringify(r.lossByCause)).toBe(100);
    expect(r.offlineAtEnd).toEqual({ clients: 6, lostDeliveries: 6 * 31 });
    expect(r.disconnectReasons).toEqual({ closed_no_reconnect: 6 });
    expect(r.series!.connected.at(-1)).toBe(0);
    expect(r.validity.flags.map((f) => f.code)).toContain('CLIENTS_OFFLINE_AT_END');
  }, 60_000);

  it('replay server (memory broker) stopped and started again on its port: server_restarted', async () => {
    // stop() says disconnect server_restart; the new process has a new epoch and no sessions, so
    // every reconnect's history (naming the old epoch) is rejected.
    let srv = createReplayServer({ port: 0, stopGraceMs: 50 });
    const port = await srv.listen(0, '127.0.0.1');
    cleanup.push(() => srv.stop());
    const o = opts({ target: 'replay', clients: 6, msgs: 80, interval: 60, jitter: 0, settle: 4000, seed: 4, reconnectStrategy: 'tuned', allowPublishFailures: true });
    const run = runJitter(o, `http://127.0.0.1:${port}`);
    let publishing = false;
    run.events.on('phase', (p) => void (p === 'publish' && (publishing = true)));
    for (let i = 0; !publishing && i < 200; i++) await sleep(50);
    await sleep(1500);
    await srv.stop();
    await sleep(300);
    srv = createReplayServer({ port: 0, stopGraceMs: 50 });
    await srv.listen(port, '127.0.0.1');
    const r = await run.result;
    expect(r.lostDeliveries).toBeGreaterThan(0);
    expect(share(r, 'server_restarted'), JSON.stringify(r.lossByCause)).toBeGreaterThanOrEqual(99);
    // Every resume failed: mostly naming the old epoch; a client back before the new server had
    // stored anything on the stream is told stream_not_found (history_rejected).
    const outcomes = r.resumeOutcomes ?? {};
    expect(Object.entries(outcomes).filter(([k]) => k.startsWith('rejected:')).reduce((n, [, v]) => n + v, 0)).toBe(r.reconnects);
    expect(outcomes['rejected:epoch_changed']).toBeGreaterThan(0);
  }, 60_000);

  it('replay server with full history: resumes fill the gap, nothing is lost, and the made-up messages count as replayed', async () => {
    const t = await startTestServer({});
    cleanup.push(() => t.close());
    const o = opts({ target: 'replay', clients: 8, msgs: 100, interval: 60, jitter: 1, jitterMs: 600, settle: 3000, seed: 5, reconnectStrategy: 'tuned' });
    const r = await runJitter(o, t.httpUrl).result;
    expect(r.reconnects).toBeGreaterThan(0);
    expect(r.lostDeliveries).toBe(0);
    expect(r.lossByCause).toEqual({});
    expect(r.resumeOutcomes?.history_filled).toBe(r.reconnects);
    expect(r.replayedDeliveries).toBeGreaterThan(0);
    // Replayed messages are the late ones: over the live p99, delivered by the history that filled the gap.
    expect(r.lateDeliveries!.byPath.history_filled).toBeGreaterThan(0);
    expect(comparisonRows([r]).find((x) => x[0] === 'Late (over live p99)')![1]).toContain('history filled x');
  }, 60_000);
});
