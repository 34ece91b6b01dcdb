import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../lib/rng.ts';
import { connectRaw, pubsubId, RawClient, sleepMs, startTestServer, testTransport, type TestServer } from './testing.ts';

/** Malformed input gets a protocol answer or a disconnect with a reason; the server never falls over. */

const INVALID = '{"type":"disconnect","reason":"invalid_request","reconnect":false}';

describe('bad input', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ maxPayloadBytes: 4096, maxSubscriptions: 5 });
  });
  afterAll(() => t.close());

  const expectInvalid = async (frame: string | Buffer) => {
    const { c } = await connectRaw(t.wsUrl);
    c.ws.send(frame);
    const closed = await c.waitClosed();
    expect(c.raw.at(-1)).toBe(INVALID);
    expect(closed.code).toBe(1008);
  };

  it.each([
    ['not JSON', 'hello'],
    ['JSON but not an object', '[1,2]'],
    ['null', 'null'],
    ['no command', '{"identifier":"x"}'],
    ['non-string command', '{"command":42}'],
    ['unknown command', '{"command":"explode","identifier":"x"}'],
    ['non-string identifier', '{"command":"subscribe","identifier":{"channel":"$pubsub","stream_name":"a"}}'],
    ['missing identifier', '{"command":"subscribe"}'],
    ['message with non-string data', '{"command":"message","identifier":"x","data":{"a":1}}'],
    ['history that is an array in subscribe', '{"command":"subscribe","identifier":"x","history":[1]}'],
  ])('%s → disconnect invalid_request', async (_name, frame) => {
    await expectInvalid(frame);
  });

  it('binary frames are read as UTF-8 text', async () => {
    const { c } = await connectRaw(t.wsUrl);
    c.ws.send(Buffer.from('{"command":"ping"}'));
    expect(await c.take(1)).toEqual([{ type: 'pong' }]);
    c.close();
  });

  it('oversized frames close with 1009 (maxPayload)', async () => {
    const { c } = await connectRaw(t.wsUrl);
    c.send({ command: 'message', identifier: 'x', data: 'y'.repeat(10_000) });
    // uWS cuts the client without a close frame (1006 at the client); ws says 1009.
    expect((await c.waitClosed()).code).toBe(testTransport() === 'uws' ? 1006 : 1009);
  });

  it('subscribe flood: beyond maxSubscriptions every subscribe is rejected, the connection survives', async () => {
    const { c } = await connectRaw(t.wsUrl);
    for (let i = 0; i < 50; i++) c.send({ command: 'subscribe', identifier: pubsubId(`flood/${i}`) });
    const got = await c.take(50);
    expect(got.filter((f) => f.type === 'confirm_subscription')).toHaveLength(5);
    expect(got.filter((f) => f.type === 'reject_subscription')).toHaveLength(45);
    c.send({ command: 'ping' });
    expect(await c.take(1)).toEqual([{ type: 'pong' }]);
    c.close();
  });

  it('bogus epoch/offset/since values → reject_history, connection stays', async () => {
    const { c } = await connectRaw(t.wsUrl);
    const id = pubsubId('bogus');
    c.send({ command: 'subscribe', identifier: id });
    await c.take(1);
    const bad: unknown[] = [null, 1, 'x', [], {}, { since: -5 }, { since: 'now' }, { since: Number.MAX_VALUE * 0 }, { streams: { bogus: null } }, { streams: { bogus: { epoch: 1, offset: 1 } } }, { streams: { bogus: { epoch: 'e', offset: 1.5 } } }, { streams: { bogus: { epoch: 'e', offset: 1e300 } } }];
    for (const history of bad) c.send({ command: 'history', identifier: id, history });
    const got = await c.take(bad.length);
    expect(got.every((f) => f.type === 'reject_history' && f.identifier === id)).toBe(true);
    c.close();
  });

  it('fuzz: thousands of random and mutated frames; the server stays up and correct', async () => {
    const rng = mulberry32(20261129);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
    const valid = [
      JSON.stringify({ command: 'subscribe', identifier: pubsubId('fz') }),
      JSON.stringify({ command: 'subscribe', identifier: pubsubId('fz'), history: { since: 1, streams: { fz: { epoch: 'x', offset: 3 } } } }),
      JSON.stringify({ command: 'history', identifier: pubsubId('fz'), history: { since: 1 } }),
      JSON.stringify({ command: 'whisper', identifier: pubsubId('fz'), data: { a: 1 } }),
      JSON.stringify({ command: 'unsubscribe', identifier: pubsubId('fz') }),
      JSON.stringify({ command: 'message', identifier: pubsubId('fz'), data: '{}' }),
      JSON.stringify({ command: 'ping' }),
      JSON.stringify({ command: 'pong' }),
    ];
    const mutate = (s: string): string => {
      const chars = [...s];
      const n = 1 + Math.floor(rng() * 4);
      for (let i = 0; i < n; i++) {
        const at = Math.floor(rng() * (chars.length + 1));
        const op = rng();
        if (op < 0.33) chars.splice(at, 1);
        else if (op < 0.66) chars.splice(at, 0, String.fromCharCode(Math.floor(rng() * 0x7f)));
        else chars[at] = pick(['"', '{', '}', '[', ']', ':', ',', '\\', '0', 'null', '\u0000', '\ud800']);
      }
      return chars.join('');
    };
    const randomJson = (depth = 0): unknown => {
      const r = rng();
      if (depth > 3 || r < 0.3) return pick([null, true, 1, -1, 1e308, 'command', 'subscribe', '', '$pubsub']);
      if (r < 0.6) return Array.from({ length: Math.floor(rng() * 4) }, () => randomJson(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(rng() * 4) }, () => [pick(['command', 'identifier', 'data', 'history', 'since', 'streams', 'x']), randomJson(depth + 1)]));
    };
    const deadline = Date.now() + 15_000;
    let sent = 0;
    for (let conn = 0; conn < 40 && Date.now() < deadline; conn++) {
      const c = new RawClient(`${t.wsUrl}?pi=1${rng() < 0.3 ? '&sid=' + mutate('abc') : ''}`, pick(['actioncable-v1-ext-json', 'actioncable-v1-json']));
      await c.opened;
      for (let i = 0; i < 100 && !c.closed; i++) {
        const r = rng();
        const frame = r < 0.4 ? mutate(pick(valid)) : r < 0.7 ? JSON.stringify(randomJson()) : r < 0.9 ? pick(valid) : Buffer.from(Array.from({ length: 20 }, () => Math.floor(rng() * 256)));
        if (c.ws.readyState === c.ws.OPEN) c.ws.send(frame);
        sent++;
        if (i % 20 === 0) void t.broadcast({ stream: 'fz', data: mutate('{"n":1}') });
      }
      await sleepMs(5);
      c.close();
    }
    expect(sent).toBeGreaterThan(1000);
    // Still serving, with correct answers.
    const { c } = await connectRaw(t.wsUrl);
    c.send({ command: 'subscribe', identifier: pubsubId('after-fuzz') });
    expect(await c.take(1)).toEqual([{ type: 'confirm_subscription', identifier: pubsubId('after-fuzz') }]);
    expect((await fetch(`${t.httpUrl}/health`)).status).toBe(200);
    c.close();
  });
});
