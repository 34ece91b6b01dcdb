/**
 * Corked writes on the ws transport: every frame a connection gets in one tick leaves in one
 * write. Twenty pings in one client frame burst are answered by twenty pongs in the same tick;
 * the server's socket must hand them to the kernel in one writev, not twenty writes. Counted on
 * the real server-side socket (its stream's _write/_writev calls, passed through).
 */
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectRaw, startTestServer, type RawClient, type TestServer } from '../testing.ts';

let t: TestServer | undefined;
let c: RawClient | undefined;
afterEach(async () => {
  c?.close();
  await t?.close();
});

describe('ws transport: one write per connection per tick', () => {
  it('twenty replies produced in one tick leave in one writev', async () => {
    t = await startTestServer({ transport: 'ws' });
    let server: Socket | undefined;
    t.srv.httpServer!.on('upgrade', (req) => (server = req.socket as Socket));
    const x = await connectRaw(t.wsUrl);
    c = x.c;
    const s = server as unknown as { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void };
    const calls = { write: 0, writev: 0 };
    const write = s._write.bind(s);
    const writev = s._writev.bind(s);
    s._write = (...a) => {
      calls.write++;
      write(...a);
    };
    s._writev = (...a) => {
      calls.writev++;
      writev(...a);
    };
    // One client write holding twenty frames: the server reads them in one go.
    const ping = JSON.stringify({ command: 'ping' });
    (c.ws as unknown as { _socket: Socket })._socket.cork();
    for (let i = 0; i < 20; i++) c.send(ping);
    (c.ws as unknown as { _socket: Socket })._socket.uncork();
    const pongs = await c.take(20);
    expect(pongs.every((f) => f.type === 'pong')).toBe(true);
    expect(calls).toEqual({ write: 0, writev: 1 });
  });
});
