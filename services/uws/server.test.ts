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
  it('a second server on a port in use fails to start; the first keeps serving', async () => {
    const first = await startService('uws');
    try {
      await expect(startService('uws', { port: first.port })).rejects.toMatchObject({ code: 'RR_ERR_SERVICE_START' });
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
