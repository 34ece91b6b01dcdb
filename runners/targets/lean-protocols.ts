import { cableUrl } from './anycable.ts';
import { LeanStage, type LeanProtocol } from './lean-client.ts';

const wsBase = (base: string) => base.replace(/^http/, 'ws').replace(/\/+$/, '');
const startsWith = (b: Buffer, prefix: Buffer) => b.length >= prefix.length && b.subarray(0, prefix.length).equals(prefix);

const PING = Buffer.from('{"type":"ping"');
const IDENT = Buffer.from('{"identifier"');

/**
 * AnyCable extended protocol (Rebound's replay server, anycable-go): subscribe to the public
 * `$pubsub` stream after `welcome`, like the benchmark's raw idle probe. Pings are recognised by
 * their first bytes and never parsed.
 */
export const leanAnyCable: LeanProtocol = {
  url: (base) => cableUrl(base),
  subprotocol: 'actioncable-v1-ext-json',
  onOpen: () => [],
  onMessage(p, stream, send) {
    if (startsWith(p, PING)) return undefined;
    let f: { type?: string; identifier?: string; message?: unknown; reason?: string };
    try {
      f = JSON.parse(p.toString());
    } catch {
      return undefined;
    }
    if (startsWith(p, IDENT) && f.message !== undefined && f.type === undefined) {
      return typeof f.message === 'string' ? { data: f.message } : { value: f.message };
    }
    switch (f.type) {
      case 'welcome':
        send(JSON.stringify({ command: 'subscribe', identifier: JSON.stringify({ channel: '$pubsub', stream_name: stream }) }));
        return { stage: LeanStage.Welcomed };
      case 'confirm_subscription':
        return { stage: LeanStage.Subscribed };
      case 'reject_subscription':
        return { error: 'subscription rejected' };
      case 'disconnect':
        return { error: `disconnected by the server (${f.reason ?? '?'})`, notice: `disconnect ${f.reason ?? '?'}` };
      default:
        return undefined;
    }
  },
};

/** services/ws: `{"type":"welcome","sid"}` on connect, `{"type":"subscribe","stream":s}` → `{"type":"subscribed"}`; data frames carry `data`. */
export const leanWs: LeanProtocol = {
  url: (base) => `${wsBase(base)}/ws`,
  onOpen: (stream) => [JSON.stringify({ type: 'subscribe', stream })],
  onMessage(p) {
    let f: { type?: string; data?: unknown; reason?: string };
    try {
      f = JSON.parse(p.toString());
    } catch {
      return undefined;
    }
    if (f.type === 'welcome') return { stage: LeanStage.Welcomed };
    if (f.type === 'subscribed') return { stage: LeanStage.Subscribed };
    if (f.type === 'error') return { error: `server error ${f.reason ?? ''}` };
    return typeof f.data === 'string' ? { data: f.data } : undefined;
  },
};

/**
 * Socket.IO 4 (engine.io v4) over a raw WebSocket: `0{...}` open → send `40` (CONNECT) →
 * `40{sid}` → emit `subscribe` with ack id 0 → `430[{"ok":true}]`. Engine pings (`2`) are
 * answered with `3`, or the server drops us after pingInterval + pingTimeout.
 */
export const leanSocketIo: LeanProtocol = {
  url: (base) => `${wsBase(base)}/socket.io/?EIO=4&transport=websocket`,
  onOpen: () => [],
  onMessage(p, stream, send) {
    const c0 = p[0];
    if (c0 === 0x32 && p.length === 1) {
      send('3');
      return undefined;
    }
    const t = p.toString();
    if (t.startsWith('0{')) {
      send('40');
      return undefined;
    }
    if (t.startsWith('40')) {
      send(`420${JSON.stringify(['subscribe', stream])}`);
      return { stage: LeanStage.Welcomed };
    }
    // A namespace DISCONNECT (41) or an engine.io close (1): the server's own goodbye.
    if (t === '41' || t.startsWith('41/')) return { notice: 'socket.io disconnect (41)' };
    if (t === '1') return { notice: 'engine.io close (1)' };
    if (t.startsWith('44')) return { error: `socket.io connect refused: ${t.slice(2)}` };
    if (t.startsWith('430')) {
      const reply = JSON.parse(t.slice(3)) as [{ ok?: boolean }];
      return reply[0]?.ok ? { stage: LeanStage.Subscribed } : { error: 'subscribe rejected' };
    }
    if (t.startsWith('42')) {
      const ev = JSON.parse(t.slice(2)) as unknown[];
      if (ev[0] === 'message' && typeof ev[1] === 'string') return { data: ev[1] };
      if (ev[0] === 'message' && ev[1] !== undefined) return { data: JSON.stringify(ev[1]) };
    }
    return undefined;
  },
};
