/**
 * The runner helper (built on toxiproxy-node-client) and the standalone server process.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open, Reader, startEchoServer, startToxiproxyTarget, targetsEmbedded, uniqueName, type TestTcpServer, type ToxiproxyTarget } from '../testing.ts';
import { createChaosProxy } from './client.ts';
import { ChaosError } from './errors.ts';
import { createToxiproxyServer } from './index.ts';

let target: ToxiproxyTarget;
let echo: TestTcpServer;

beforeAll(async () => {
  target = await startToxiproxyTarget();
  echo = await startEchoServer();
});
afterAll(async () => {
  await echo.close();
  await target.close();
});

async function rtt(r: Reader): Promise<number> {
  const t0 = performance.now();
  r.socket.write('x');
  await r.bytes(r.length + 1, 10_000);
  return performance.now() - t0;
}

describe('createChaosProxy (runner helper)', () => {
  it('create → add toxic → update by name → remove by name, on a live connection', async () => {
    const p = await createChaosProxy(target.url, { name: uniqueName('helper'), upstream: echo.upstream });
    expect(p.port).toBeGreaterThan(0);
    expect(p.listen).toBe(`${p.host}:${p.port}`);
    const r = await open(p.listen);
    const t = await p.addToxic({ type: 'latency', attributes: { latency: 120 } });
    expect(t).toMatchObject({ name: 'latency_downstream', stream: 'downstream', toxicity: 1, attributes: { latency: 120, jitter: 0 } });
    expect(await rtt(r)).toBeGreaterThanOrEqual(118);
    const u = await p.updateToxic('latency_downstream', { attributes: { jitter: 10 } });
    expect(u.attributes).toEqual({ latency: 120, jitter: 10 });
    await p.removeToxic('latency_downstream');
    expect(await rtt(r)).toBeLessThan(110);
    await p.addToxic({ type: 'noop', name: 'n', stream: 'upstream' });
    await p.addToxic({ type: 'reset_peer', name: 'rp', attributes: { timeout: 0 } });
    await p.removeToxic('rp');
    r.socket.destroy();
    await p.remove();
  });

  it('setEnabled(false) drops connections and keeps the port for setEnabled(true)', async () => {
    const p = await createChaosProxy(target.url, { name: uniqueName('toggle'), upstream: echo.upstream });
    const r = await open(p.listen);
    await rtt(r);
    await p.setEnabled(false);
    await r.closed();
    await p.setEnabled(true);
    const again = await open(p.listen);
    await rtt(again);
    again.socket.destroy();
    await p.remove();
  });

  it('replaces a leftover proxy of the same name', async () => {
    const name = uniqueName('leftover');
    const first = await createChaosProxy(target.url, { name, upstream: echo.upstream });
    const second = await createChaosProxy(target.url, { name, upstream: echo.upstream });
    expect(second.name).toBe(name);
    await second.remove();
    await expect(first.remove()).rejects.toMatchObject({ code: 'RR_ERR_CHAOS_PROXY_API', details: { status: 404 } });
  });

  it('API failures are coded RR_ERR_CHAOS_PROXY_API with the HTTP status', async () => {
    const p = await createChaosProxy(target.url, { name: uniqueName('errors'), upstream: echo.upstream });
    const err = await p.removeToxic('missing').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChaosError);
    expect(err).toMatchObject({ code: 'RR_ERR_CHAOS_PROXY_API', details: { status: 404 } });
    await p.addToxic({ type: 'noop', name: 'twice' });
    await expect(p.addToxic({ type: 'noop', name: 'twice' })).rejects.toMatchObject({ details: { status: 409 } });
    await p.remove();
  });

  it('an unreachable API is a coded error too, not a hang', async () => {
    const err = await createChaosProxy('http://127.0.0.1:1', { name: 'x', upstream: echo.upstream, timeoutMs: 2000 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'RR_ERR_CHAOS_PROXY_API' });
  });
});

describe.runIf(targetsEmbedded)('embedded server lifecycle', () => {
  it('port 0 gets a real port; a taken port is RR_ERR_CHAOS_PROXY_LISTEN', async () => {
    const a = await createToxiproxyServer({ port: 0 });
    expect(a.port).toBeGreaterThan(0);
    expect(a.url).toBe(`http://127.0.0.1:${a.port}`);
    await expect(createToxiproxyServer({ port: a.port })).rejects.toMatchObject({ code: 'RR_ERR_CHAOS_PROXY_LISTEN' });
    await a.close();
    await a.close();
  });

  it('bad options throw RR_ERR_OPTION_INVALID before binding anything', async () => {
    await expect(createToxiproxyServer({ port: 70000 })).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID', details: { option: 'port' } });
    await expect(createToxiproxyServer({ port: 0, maxBufferedBytes: 10 })).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID' });
  });

  it('close() closes every proxy listener and connection', async () => {
    const s = await createToxiproxyServer({ port: 0, populate: [{ name: 'pre', listen: '127.0.0.1:0', upstream: echo.upstream }] });
    const list = (await (await fetch(`${s.url}/proxies`)).json()) as Record<string, { listen: string }>;
    const r = await open(list.pre!.listen);
    await rtt(r);
    await s.close();
    await r.closed();
  });

  it('standalone: `chaos/toxiproxy/main.ts --port 0` serves the API and exits 0 on SIGTERM', async () => {
    const main = fileURLToPath(new URL('./main.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', main, '--port', '0', '--host', '127.0.0.1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`exited early with ${code}`)));
    });
    const version = await fetch(`${url}/version`);
    expect(version.status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
