import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { getTarget, leanClientFor } from './index.ts';

/**
 * A server's frames are untrusted input: JSON that is not an object (`null`, a number, a string,
 * an array) or no JSON at all must leave the client to fail its connect with a reason, never
 * throw inside a socket handler (that would kill the runner process and every client in it).
 */
const JUNK = ['null', '5', '"text"', '[]', 'true', 'not json', '{"type":null}'];

async function junkServer(frames: readonly string[] = JUNK): Promise<{ url: string; close(): Promise<void> }> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: (p) => [...p][0] ?? false });
  await once(wss, 'listening');
  wss.on('connection', (ws) => {
    for (const f of frames) ws.send(f);
    setTimeout(() => ws.close(1000), 100);
  });
  return {
    url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    close: () => new Promise((r) => wss.close(() => r())),
  };
}

describe('clients against a server that sends junk frames', () => {
  const makers = {
    'ws full client': (url: string) => getTarget('ws').createClient({ index: 0, url, stream: 's' }),
    'ws lean client': (url: string) => leanClientFor('ws')!({ index: 0, url, stream: 's' }),
    'replay lean client (AnyCable wire)': (url: string) => leanClientFor('replay')!({ index: 0, url, stream: 's' }),
  };
  // Socket.IO frames carry JSON after a packet-type prefix: an event (42) or a subscribe ack (430) whose JSON is junk.
  const SOCKETIO_JUNK = ['40', '42null', '42garbage', '42{}', '425', '430null', '430garbage', '430[null]'];
  const cases = [...Object.entries(makers).map(([name, make]) => ({ name, make, frames: JUNK })), { name: 'socketio lean client (Socket.IO wire)', make: (url: string) => leanClientFor('socketio')!({ index: 0, url, stream: 's' }), frames: SOCKETIO_JUNK }];
  for (const { name, make, frames } of cases) {
    it(`${name}: connect fails, nothing throws`, async () => {
      const srv = await junkServer(frames);
      try {
        const c = make(srv.url);
        c.on('error', () => {});
        const outcome = await Promise.race([
          c.connect().then(
            () => 'connected',
            () => 'refused',
          ),
          new Promise((r) => setTimeout(() => r('timeout'), 5000)),
        ]);
        expect(outcome).toBe('refused');
        c.close();
      } finally {
        await srv.close();
      }
    });
  }
});
