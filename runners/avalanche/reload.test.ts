import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reloadWorkers } from '../../engine/measure/restart.ts';

/**
 * The runner's side of the replay server's reload contract (POST /_admin/reload): each answer the
 * route can give becomes a clear outcome. A real HTTP server plays the route's answers.
 */
describe('worker reload client', () => {
  let server: Server;
  let base = '';
  let answer: { status: number; body: unknown } = { status: 200, body: {} };
  let auth: string | undefined;
  beforeAll(async () => {
    server = createServer((req, res) => {
      auth = req.headers.authorization;
      req.resume();
      req.on('end', () => res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('200 with the replaced workers, sending the bearer key', async () => {
    const workers = [{ oldPid: 1, newPid: 2, startedAt: 10, endedAt: 20 }];
    answer = { status: 200, body: { workers } };
    expect(await reloadWorkers(base, 'k3y', 5000)).toEqual(workers);
    expect(auth).toBe('Bearer k3y');
  });

  it.each([
    [404, { statusCode: 404, code: 'RR_ERR_NOT_FOUND', message: 'no route' }, /the target does not support worker reload/],
    [400, { statusCode: 400, code: 'RR_ERR_RELOAD_UNAVAILABLE', message: 'needs cluster mode' }, /the target does not support worker reload/],
    [409, { statusCode: 409, code: 'RR_ERR_RELOAD_IN_PROGRESS', message: 'busy' }, /already reloading/],
    [403, { statusCode: 403, code: 'RR_ERR_ADMIN_FORBIDDEN', message: 'no' }, /refused .*broadcast-key/],
    [500, { statusCode: 500, code: 'RR_ERR_RELOAD_FAILED', message: 'worker did not start' }, /answered 500: RR_ERR_RELOAD_FAILED: worker did not start/],
    [200, { ok: true }, /without a workers list/],
  ])('%i is a clear failure', async (status, body, msg) => {
    answer = { status, body };
    await expect(reloadWorkers(base, '', 5000)).rejects.toThrow(msg);
  });
});
