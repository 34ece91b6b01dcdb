import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startTestRedis, type TestRedis } from '../../services/common/redis-testing.ts';

/**
 * Railway health-checks every service of the one image at railway.toml's `healthcheckPath`. Each
 * entry docker-compose.yml builds from the image is started as its own process (PORT=0, with the
 * service's own variables) and must answer that path with 200. Entries on Redis get a real
 * redis-server of their own. The chaos proxy is a Railway service of the same image too
 * (SERVICE_ENTRY=chaos/toxiproxy/main.ts; compose runs the real Toxiproxy instead), so it is checked
 * as well.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const toml = readFileSync(ROOT + 'railway.toml', 'utf8');
const healthPath = /^healthcheckPath\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
const compose = parse(readFileSync(ROOT + 'docker-compose.yml', 'utf8'), { merge: true }) as { services: Record<string, { build?: string; environment?: Record<string, string> }> };
const built = Object.entries(compose.services).filter(([, s]) => s.build);
const children: ReturnType<typeof spawn>[] = [];
let redis: TestRedis | undefined;
beforeAll(async () => {
  if (built.some(([, s]) => s.environment?.REDIS_URL)) redis = await startTestRedis();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await redis?.close();
});

function start(env: Record<string, string>): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', env.SERVICE_ENTRY!], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${env.SERVICE_ENTRY} did not report its port: ${err}`)), 30_000);
    child.once('exit', (code) => (clearTimeout(t), reject(new Error(`${env.SERVICE_ENTRY} exited ${code}: ${err}`))));
    child.stdout!.on('data', (d) => {
      out += d;
      // Services print a JSON line with their port; the chaos proxy prints `listening on <url> pid <n>`.
      const line = out.split('\n').find((l) => l.startsWith('{'));
      const listening = /listening on http:\/\/[^:\s]+:(\d+)/.exec(out)?.[1];
      if (line) (clearTimeout(t), resolve((JSON.parse(line) as { port: number }).port));
      else if (listening) (clearTimeout(t), resolve(Number(listening)));
    });
  });
}

describe(`railway.toml health check (${healthPath}) on every service of the one image`, () => {
  it('railway.toml health-checks a path', () => expect(healthPath).toBe('/health'));

  const entries: [string, Record<string, string>][] = [...built.map(([name, s]) => [name, s.environment!] as [string, Record<string, string>]), ['chaos-proxy', { SERVICE_ENTRY: 'chaos/toxiproxy/main.ts', REBOUND_ALLOW_PUBLIC: '1' }]];
  it.each(entries)('%s answers it with 200', async (_name, env) => {
    // Compose values that are variables (${...}) are supplied here; HOST/PORT as on Railway's private side.
    const vars = Object.fromEntries(Object.entries(env).filter(([, v]) => !v.startsWith('${')));
    if (vars.REDIS_URL) vars.REDIS_URL = redis!.url;
    const port = await start({ ...vars, HOST: '127.0.0.1', PORT: '0', BENCH_RUNNER_TOKEN: 'health-test', BROADCAST_KEY: 'k', TARGET_REPLAY_URL: 'http://127.0.0.1:9', TARGET_SOCKETIO_URL: 'http://127.0.0.1:9', TARGET_SOCKETIO_CSR_URL: 'http://127.0.0.1:9', TARGET_WS_URL: 'http://127.0.0.1:9' });
    const res = await fetch(`http://127.0.0.1:${port}${healthPath}`);
    expect(res.status).toBe(200);
    children.at(-1)!.kill('SIGTERM');
  });
});
