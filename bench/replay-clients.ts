/**
 * Bench client process (forked by bench/replay-idle.ts and bench/replay-fanout.ts). Opens `count`
 * connections from one source address, subscribes each to `streams[i % streams.length]`, then
 * reports and idles until told to close. Keeping clients in separate processes keeps their
 * memory and CPU out of the server's numbers and each process under its fd budget.
 *
 * Modes: `raw-ext` (a raw `ws` client speaking the AnyCable ext protocol: count, record latency
 * from `sentAt`), `lean-ext` (the same over a bare TCP socket with a minimal frame reader, so
 * that on a small host the clients' own CPU does not cap a fan-out measurement), or
 * `target:<name>` (a Rebound TargetClient adapter, used to load the ws/socketio reference
 * services the same way the runners do).
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import * as hdr from 'hdr-histogram-js';
import WebSocket from 'ws';
import type { TargetClient, TargetDefinition } from '../runners/targets/types.ts';

export type ParentToChild =
  | { type: 'start'; mode: string; url: string; count: number; streams: string[]; offset: number; localAddresses: string[]; concurrency: number }
  | { type: 'mark' }
  | { type: 'close' };

export type ChildToParent =
  | { type: 'progress'; connected: number; failed: number }
  | { type: 'ready'; connected: number; failed: number; ms: number }
  | { type: 'counts'; received: number; histogram: string; disconnects: Record<string, number>; open: number }
  | { type: 'closed' };

const send = (m: ChildToParent) => process.send?.(m);

let histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000, numberOfSignificantValueDigits: 3 });
let received = 0;
let open = 0;
const disconnects: Record<string, number> = {};
const closers: Array<() => void> = [];

function record(sentAt: unknown): void {
  received++;
  if (typeof sentAt === 'number') histogram.recordValue(Math.max(1, Date.now() - sentAt));
}

function rawExt(url: string, stream: string, localAddress: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/cable`, 'actioncable-v1-ext-json', { perMessageDeflate: false, localAddress });
    const identifier = JSON.stringify({ channel: '$pubsub', stream_name: stream });
    let confirmed = false;
    ws.on('open', () => ws.send(JSON.stringify({ command: 'subscribe', identifier })));
    ws.on('message', (raw) => {
      const text = raw.toString();
      // Data frames are the hot path: read sentAt without parsing the whole frame.
      if (text.startsWith('{"identifier"')) {
        const at = text.indexOf('"sentAt":');
        return record(at < 0 ? undefined : parseInt(text.slice(at + 9, at + 24), 10));
      }
      const f = JSON.parse(text) as { type?: string; reason?: string };
      if (f.type === 'confirm_subscription' && !confirmed) {
        confirmed = true;
        open++;
        resolve();
      } else if (f.type === 'disconnect') disconnects[f.reason ?? '?'] = (disconnects[f.reason ?? '?'] ?? 0) + 1;
    });
    ws.on('error', (err) => {
      if (!confirmed) reject(err);
    });
    ws.on('close', () => {
      if (confirmed) open--;
      if (!confirmed) reject(new Error('closed before confirm'));
    });
    closers.push(() => ws.terminate());
  });
}


const SENT_AT = Buffer.from('"sentAt":');
const IDENT = Buffer.from('{"identifier"');

/** A bare-socket ext-protocol client: handshake, one masked subscribe frame, then a frame reader. */
function leanExt(url: string, stream: string, localAddress: string): Promise<void> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = connect({ host: u.hostname, port: Number(u.port), localAddress });
    sock.setNoDelay(true);
    let buf: Buffer = Buffer.alloc(0);
    let upgraded = false;
    let confirmed = false;
    const fail = (err: Error) => {
      if (!confirmed) reject(err);
    };
    sock.on('connect', () => {
      const key = randomBytes(16).toString('base64');
      sock.write(`GET /cable HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: actioncable-v1-ext-json\r\n\r\n`);
    });
    const onFrame = (payload: Buffer) => {
      if (payload.subarray(0, IDENT.length).equals(IDENT)) {
        const at = payload.indexOf(SENT_AT);
        return record(at < 0 ? undefined : parseInt(payload.toString('latin1', at + SENT_AT.length, at + SENT_AT.length + 16), 10));
      }
      const text = payload.toString();
      if (!confirmed && text.includes('"confirm_subscription"')) {
        confirmed = true;
        open++;
        resolve();
      } else if (text.startsWith('{"type":"disconnect"')) {
        const reason = (JSON.parse(text) as { reason?: string }).reason ?? '?';
        disconnects[reason] = (disconnects[reason] ?? 0) + 1;
      }
    };
    sock.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        if (!buf.subarray(0, 12).toString().includes('101')) return fail(new Error('upgrade refused'));
        upgraded = true;
        buf = buf.subarray(end + 4);
        const body = Buffer.from(JSON.stringify({ command: 'subscribe', identifier: JSON.stringify({ channel: '$pubsub', stream_name: stream }) }));
        // Client frames must be masked; an all-zero key leaves the payload as is.
        const head = body.length < 126 ? Buffer.from([0x81, 0x80 | body.length, 0, 0, 0, 0]) : Buffer.from([0x81, 0x80 | 126, body.length >> 8, body.length & 255, 0, 0, 0, 0]);
        sock.write(Buffer.concat([head, body]));
      }
      let off = 0;
      while (buf.length - off >= 2) {
        const b1 = buf[off + 1]! & 0x7f;
        let hlen = 2;
        let len = b1;
        if (b1 === 126) {
          if (buf.length - off < 4) break;
          len = buf.readUInt16BE(off + 2);
          hlen = 4;
        } else if (b1 === 127) {
          if (buf.length - off < 10) break;
          len = buf.readUInt32BE(off + 6);
          hlen = 10;
        }
        if (buf.length - off < hlen + len) break;
        const opcode = buf[off]! & 0x0f;
        if (opcode === 1) onFrame(buf.subarray(off + hlen, off + hlen + len));
        else if (opcode === 8) sock.end();
        off += hlen + len;
      }
      buf = off === buf.length ? Buffer.alloc(0) : buf.subarray(off);
    });
    sock.on('error', fail);
    sock.on('close', () => {
      if (confirmed) open--;
      else fail(new Error('closed before confirm'));
    });
    closers.push(() => sock.destroy());
  });
}

async function targetClient(name: string, url: string, stream: string, localAddress: string, index: number): Promise<void> {
  const def = await loadTarget(name);
  const c: TargetClient = def.createClient({ index, url, stream, localAddress });
  c.on('message', (m) => {
    try {
      record((JSON.parse(m.data) as { sentAt?: number }).sentAt);
    } catch {
      received++;
    }
  });
  c.on('disconnected', (i) => (disconnects[i.detail ?? i.reason] = (disconnects[i.detail ?? i.reason] ?? 0) + 1));
  await c.connect();
  open++;
  closers.push(() => c.close());
}

const targetCache = new Map<string, TargetDefinition>();
async function loadTarget(name: string): Promise<TargetDefinition> {
  const hit = targetCache.get(name);
  if (hit) return hit;
  const file = name === 'replay' || name === 'anycable' ? 'anycable.ts' : name.startsWith('socketio') ? 'socketio.ts' : `${name}.ts`;
  const mod = (await import(`../runners/targets/${file}`)) as Record<string, unknown>;
  const def = Object.values(mod).find((v): v is TargetDefinition => typeof v === 'object' && v !== null && (v as TargetDefinition).name === name);
  if (!def) throw new Error(`no target "${name}" in runners/targets/${file}`);
  targetCache.set(name, def);
  return def;
}

async function start(m: Extract<ParentToChild, { type: 'start' }>): Promise<void> {
  const t0 = Date.now();
  let next = 0;
  let connected = 0;
  let failed = 0;
  const progress = setInterval(() => send({ type: 'progress', connected, failed }), 1000);
  const worker = async () => {
    while (next < m.count) {
      const i = next++;
      const stream = m.streams[(m.offset + i) % m.streams.length]!;
      // Rotate source addresses: binding many sockets to one address makes the kernel's port search slow.
      const localAddress = m.localAddresses[i % m.localAddresses.length]!;
      try {
        if (m.mode === 'raw-ext') await rawExt(m.url, stream, localAddress);
        else if (m.mode === 'lean-ext') await leanExt(m.url, stream, localAddress);
        else await targetClient(m.mode.slice('target:'.length), m.url, stream, localAddress, m.offset + i);
        connected++;
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: m.concurrency }, worker));
  clearInterval(progress);
  send({ type: 'ready', connected, failed, ms: Date.now() - t0 });
}

process.on('message', (m: ParentToChild) => {
  switch (m.type) {
    case 'start':
      void start(m);
      return;
    case 'mark': {
      send({ type: 'counts', received, histogram: hdr.encodeIntoCompressedBase64(histogram), disconnects: { ...disconnects }, open });
      received = 0;
      histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000, numberOfSignificantValueDigits: 3 });
      return;
    }
    case 'close':
      for (const c of closers) c();
      send({ type: 'closed' });
      setTimeout(() => process.exit(0), 200);
      return;
  }
});
process.on('disconnect', () => process.exit(0));
