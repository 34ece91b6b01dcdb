/**
 * What only the uWS server has to get right about its port (docs/uws.md): one process refuses a
 * port another server serves on (as ws's bind does), and a killed server with live clients is
 * back on its port at once (uSockets sets SO_REUSEADDR only on a concrete port, so port 0 is made
 * one first; without it the TIME_WAIT connections would block the port for a minute).
 */
import { describe, expect, it } from 'vitest';
import { startService } from '../common/spawn.ts';
import { wsClient } from '../common/test-clients.ts';
import { uwsAvailability } from './load.ts';

describe.skipIf(!uwsAvailability().available)('uws server port', () => {
  // --workers 2: each worker binds with SO_REUSEPORT, so a second cluster would share the port
  // with the first (each taking part of its connections) unless the primary checks it first.
  it.each([[[]], [['--workers', '2']]])('a second server %j on a port in use fails to start, saying why; the first keeps serving', async (args) => {
    const first = await startService('uws', { args });
    try {
      const second = startService('uws', { args, port: first.port });
      await expect(second).rejects.toMatchObject({ code: 'RR_ERR_SERVICE_START' });
      await expect(second).rejects.toThrow(`uws: RR_ERR_SERVICE_START: port ${first.port} on 127.0.0.1 is already in use`);
      expect((await fetch(`${first.httpUrl}/health`)).status).toBe(200);
    } finally {
      await first.stop();
    }
  });

  it('killed with clients connected, it restarts on the same port at once', async () => {
    const svc = await startService('uws');
    const clients = await Promise.all(Array.from({ length: 5 }, () => wsClient(svc)));
    await svc.kill('SIGKILL');
    const again = await startService('uws', { port: svc.port });
    try {
      expect(again.port).toBe(svc.port);
      const c = await wsClient(again);
      expect(c.sid).toMatch(/^[0-9a-f-]{36}$/);
      c.close();
    } finally {
      for (const c of clients) c.close();
      await again.stop();
    }
  });
});
