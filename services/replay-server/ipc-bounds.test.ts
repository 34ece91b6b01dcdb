import { describe, expect, it } from 'vitest';
import { IpcBroker, servePrimary, type IpcChannel, type PrimaryToWorker, type WorkerToPrimary } from './broker/ipc.ts';
import { MemoryBroker } from './broker/memory.ts';
import type { ReplayServerOptions } from './options.ts';
import { pubsubId, sleepMs } from './testing.ts';
import { useTestServers } from './test-fixture.ts';

/**
 * A worker's traffic with the primary, in process: the real IpcBroker and servePrimary over a
 * pipe that serialises every message as process IPC does (JSON) and records its size, with an
 * optional delay. Lowered limits stand in for the gigabytes of the original reports (issue 8,
 * items 3, 4, 6 and 9).
 */

interface Recorded {
  dir: 'up' | 'down';
  type: string;
  bytes: number;
}

function recordingPipe(delayMs = 0, maxMessageBytes = Infinity) {
  const log: Recorded[] = [];
  const toPrimary = new Set<(m: WorkerToPrimary) => void>();
  const toWorker = new Set<(m: PrimaryToWorker) => void>();
  const carry = <T extends { type: string }>(dir: 'up' | 'down', m: T, to: Set<(m: T) => void>) => {
    const json = JSON.stringify(m);
    // Process IPC builds one string per message; past a size it cannot (V8's string limit).
    if (json.length > maxMessageBytes) throw new RangeError(`IPC message of ${json.length} bytes exceeds ${maxMessageBytes}`);
    log.push({ dir, type: m.type, bytes: json.length });
    const deliver = () => to.forEach((f) => f(JSON.parse(json) as T));
    if (delayMs > 0) setTimeout(deliver, delayMs);
    else setImmediate(deliver);
  };
  const worker: IpcChannel<WorkerToPrimary, PrimaryToWorker> = {
    send: (m) => carry('up', m, toPrimary),
    onMessage: (fn) => (toWorker.add(fn), () => toWorker.delete(fn)),
  };
  const primary: IpcChannel<PrimaryToWorker, WorkerToPrimary> = {
    send: (m) => carry('down', m, toWorker),
    onMessage: (fn) => (toPrimary.add(fn), () => toPrimary.delete(fn)),
  };
  return { worker, primary, log };
}

const fx = useTestServers();
const open = fx.open;

/** A replay server whose broker is a primary's, across the recording pipe. */
async function workerServer(opts: Partial<ReplayServerOptions> = {}, pipeOpts: { delayMs?: number; maxMessageBytes?: number } = {}) {
  const mem = new MemoryBroker({ historyLimit: 1000, historyTtlSec: 300, sessionTtlSec: 300 });
  fx.closeLater(() => mem.close());
  const pipe = recordingPipe(pipeOpts.delayMs, pipeOpts.maxMessageBytes);
  servePrimary(mem).attach(pipe.primary);
  const t = await fx.start(opts, { broker: new IpcBroker(pipe.worker) });
  return { t, mem, log: pipe.log };
}
const sumBytes = (log: Recorded[], type: string) => log.filter((r) => r.type === type).reduce((n, r) => n + r.bytes, 0);

describe('cluster IPC: 201 after the primary stored it (item 3)', () => {
  it('the answer waits for the primary, so the message is in history when 201 arrives', async () => {
    const { t, mem } = await workerServer({}, { delayMs: 80 });
    const res = await t.broadcast({ stream: 'ack/1', data: '{"n":1}' });
    expect(res.status).toBe(201);
    expect(mem.historySync('ack/1', { since: 1 })).toMatchObject({ ok: true, messages: [{ offset: 1 }] });
  });

  it('a primary that does not answer makes /_broadcast answer 503, not 201', async () => {
    const silent: IpcChannel<WorkerToPrimary, PrimaryToWorker> = { send: () => {}, onMessage: () => () => {} };
    const t = await fx.start({}, { broker: new IpcBroker(silent, 200) });
    const res = await t.broadcast({ stream: 'ack/2', data: '1' });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: 'RR_ERR_REPLAY_STORE_FAILED' });
  });
});

describe('cluster IPC: history in bounded pages (item 4)', () => {
  it('a backlog larger than one IPC message is served page by page, every message in order', async () => {
    // 30 x 20 KB: one message for the whole backlog would be ~600 KB; the pipe refuses > 400 KB
    // (pages are historyPageBytes, 256 KiB by default, plus at most one message).
    const { t, log } = await workerServer({}, { maxMessageBytes: 400_000 });
    const data = JSON.stringify({ pad: 'p'.repeat(20_000) });
    for (let i = 0; i < 30; i++) expect((await t.broadcast({ stream: 'pages', data })).status).toBe(201);
    const { c } = await open(t.wsUrl);
    const id = pubsubId('pages');
    c.send({ command: 'subscribe', identifier: id, history: { since: 1 } });
    const got = await c.take(32, 10_000);
    expect(got.slice(1, 31).map((f) => f.offset)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(got[31]).toEqual({ type: 'confirm_history', identifier: id });
    const pages = log.filter((r) => r.type === 'history.result');
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...pages.map((p) => p.bytes))).toBeLessThan(400_000);
  });
});

describe('cluster IPC: history work bounded per connection (item 6)', () => {
  it('100 repeated history commands cost about one backlog of IPC, not 100, and each is answered', async () => {
    const { t, log } = await workerServer();
    const { c } = await open(t.wsUrl);
    const id = pubsubId('spam');
    c.send({ command: 'subscribe', identifier: id });
    await c.take(1);
    const data = JSON.stringify({ pad: 'q'.repeat(10_000) });
    for (let i = 0; i < 3; i++) await t.broadcast(Array.from({ length: 10 }, () => ({ stream: 'spam', data })));
    expect((await c.take(30, 5000)).map((f) => f.offset)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    const backlogBytes = sumBytes(log, 'deliver');
    const before = sumBytes(log, 'history.result');
    // A bystander on the same worker keeps receiving live frames while the spam is served.
    const by = await open(t.wsUrl);
    by.c.send({ command: 'subscribe', identifier: pubsubId('live') });
    await by.c.take(1);
    for (let i = 0; i < 100; i++) c.send({ command: 'history', identifier: id, history: { since: 1 } });
    await t.broadcast({ stream: 'live', data: '{"tick":1}' });
    expect((await by.c.take(1, 3000))[0]).toMatchObject({ offset: 1, message: { tick: 1 } });
    const answers = await c.take(100, 10_000);
    expect(answers.every((f) => f.type === 'confirm_history')).toBe(true);
    const historyBytes = sumBytes(log, 'history.result') - before;
    expect(historyBytes).toBeLessThan(3 * backlogBytes);
    expect(t.srv.counters.historyCoalesced).toBeGreaterThan(90);
  });
});

describe('sessions are stored incrementally (item 9)', () => {
  it('100 subscribes send each identifier once to the store, not the whole session each time', async () => {
    const { t, log } = await workerServer();
    const { c } = await open(t.wsUrl);
    const ids = Array.from({ length: 100 }, (_, i) => pubsubId(`inc/${i}/${'i'.repeat(300)}`));
    for (const id of ids) c.send({ command: 'subscribe', identifier: id });
    await c.take(100, 5000);
    await sleepMs(50);
    const idBytes = ids.reduce((n, id) => n + JSON.stringify(id).length, 0);
    const sessionBytes = log.filter((r) => r.dir === 'up' && r.type.startsWith('session.')).reduce((n, r) => n + r.bytes, 0);
    // Re-encoding the whole session per subscribe would send ~50 x idBytes.
    expect(sessionBytes).toBeLessThan(2 * idBytes);
  });
});
