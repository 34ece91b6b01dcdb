import { sleep, withTimeout } from '../../lib/time.ts';
import { sourceAddress } from '../../engine/measure/addresses.ts';
import { readPayload } from '../../engine/targets/payload.ts';
import { classifyConnectError } from '../../engine/measure/runner-limits.ts';
import { watchRunner } from '../../engine/measure/runner-health.ts';
import { sendToParent } from '../../engine/measure/child-link.ts';
import { createAnyCableClient } from '../../engine/targets/anycable.ts';
import type { TargetClient } from '../../engine/targets/types.ts';
import type { ClientsStart, ClientsToParent, ParentToClients } from './messages.ts';

/**
 * One client process of the sick-Redis runner: its share of official @anycable/core clients
 * (separate processes so one event loop never carries every socket, and the fd limit is per
 * process), every arrival forwarded to the parent in 100 ms batches; the parent keeps the one
 * ledger and epoch book.
 */
const send = (m: ClientsToParent) => sendToParent(m);
/** Longest history-rejection reason kept (the replay server's are under 20 characters). */
const MAX_REASON_CHARS = 64;
const health = watchRunner();
const clients: TargetClient[] = [];
const epochIndex = new Map<string, number>();
let announced = 0;
let data: number[] = [];
let rejected: [number, number, string][] = [];
let disconnects: Record<string, number> = {};
let foreign = 0;
let stopping = false;

const flush = () => {
  const all = [...epochIndex.keys()];
  if (!data.length && announced === all.length && !rejected.length && !Object.keys(disconnects).length) return;
  send({ type: 'arrivals', data, epochBase: announced, epochs: all.slice(announced), rejected, disconnects });
  announced = all.length;
  data = [];
  rejected = [];
  disconnects = {};
};
const flusher = setInterval(flush, 100);

async function start(s: ClientsStart): Promise<void> {
  let connected = 0;
  const failureCauses: Record<string, number> = {};
  const pending: Promise<void>[] = [];
  for (let k = 0; k < s.count; k++) {
    const i = s.first + k;
    const c = createAnyCableClient({ index: i, url: s.urls[i % s.urls.length]!, stream: s.stream, localAddress: sourceAddress(i), reconnectStrategy: s.reconnectStrategy });
    clients.push(c);
    c.on('message', (m) => {
      const p = readPayload(m, s.runId);
      if (!p) return void foreign++;
      let e = -1;
      if (m.epoch) {
        e = epochIndex.get(m.epoch) ?? epochIndex.size;
        if (e === epochIndex.size) epochIndex.set(m.epoch, e);
      }
      data.push(i, p.seq, m.offset ?? -1, e);
    });
    c.on('history', ({ ok, reason }) => {
      // The reason is the server's word: bounded before it crosses to the parent.
      if (!ok) rejected.push([i, data.length / 4, (reason ?? '').slice(0, MAX_REASON_CHARS)]);
    });
    c.on('disconnected', ({ reason }) => {
      if (!stopping) disconnects[reason] = (disconnects[reason] ?? 0) + 1;
    });
    c.on('error', () => {});
    pending.push(
      c.connect().then(
        () => void connected++,
        (err: Error & { code?: string }) => {
          const cause = classifyConnectError(err) ?? 'target';
          failureCauses[cause] = (failureCauses[cause] ?? 0) + 1;
        },
      ),
    );
    if ((k + 1) % Math.max(1, Math.round(s.rampPerSec / 10)) === 0) await sleep(100);
  }
  // Bounded: a subscribe that never confirms counts as failed after 20 s.
  await withTimeout(Promise.all(pending), 20_000).catch(() => {});
  // Those still pending at the bound are timeouts, whatever the others failed of.
  const unbooked = s.count - connected - Object.values(failureCauses).reduce((a, b) => a + b, 0);
  if (unbooked > 0) failureCauses.timeout = (failureCauses.timeout ?? 0) + unbooked;
  send({ type: 'ready', connected, failed: s.count - connected, failureCauses });
}

process.on('message', (m: ParentToClients) => {
  if (m.type === 'start') void start(m);
  else if (m.type === 'drop') {
    for (const i of m.clients) clients.find((c) => c.index === i)?.drop();
  } else if (m.type === 'away') {
    for (const i of m.clients) {
      const c = clients.find((x) => x.index === i);
      if (!c) continue;
      c.close();
      setTimeout(() => void c.reconnect().catch(() => {}), m.ms).unref();
    }
  } else if (m.type === 'stop') {
    stopping = true;
    for (const c of clients) c.close();
    flush();
    clearInterval(flusher);
    const h = health.stop();
    send({ type: 'stopped', peakRssMb: h.runnerPeakRssMb, loopLagP99Ms: h.runnerLoopLagMs.p99, foreign });
    setTimeout(() => process.exit(0), 200);
  }
});
process.on('disconnect', () => process.exit(0));
