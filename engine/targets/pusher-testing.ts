import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * A real soketi for the pusher target's tests, in ONE place: until the `soketi` local service
 * (services/soketi, issue 38 part A) is merged, the tests start the scratch install themselves.
 * At merge this file becomes `startService('soketi')` and `soketiAvailability()`.
 *
 * soketi listens on fixed ports only (its WebSocket/HTTP port, the /usage+metrics port and the
 * cluster discovery UDP port), so each gets a free port picked here; the default app is
 * app-id / app-key / app-secret.
 */
const SOKETI_BIN = process.env.SOKETI_BIN ?? '/work/soketi-scratch/node_modules/.bin/soketi';

/** Why soketi cannot run here, or undefined when it can. */
export function soketiMissing(): string | undefined {
  return existsSync(SOKETI_BIN) ? undefined : `soketi not installed here (${SOKETI_BIN}; set SOKETI_BIN)`;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startSoketi(env: Record<string, string> = {}): Promise<{ url: string; port: number; stop(): Promise<void> }> {
  const [port, metrics, cluster] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(SOKETI_BIN, ['start'], {
    env: { ...process.env, SOKETI_PORT: String(port), SOKETI_METRICS_SERVER_PORT: String(metrics), SOKETI_CLUSTER_PORT: String(cluster), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (d: Buffer) => void (out.length < 8192 && (out += d.toString()));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`soketi exited (${child.exitCode}): ${out.slice(-2000)}`);
    const ok = await fetch(`${url}/`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`soketi did not answer on ${url} within 20 s: ${out.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    port,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    },
  };
}
