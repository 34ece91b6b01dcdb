import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { until } from '../../lib/time.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface RunnerProcess {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  /** SIGTERM and wait; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export const tempResultsDir = () => mkdtempSync(join(tmpdir(), 'rr-runner-'));

/** Start `shards/runner/main.ts` as its own process on port 0 and wait for its JSON line. */
export function startRunner(env: Record<string, string>): Promise<RunnerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'shards/runner/main.ts'], { cwd: ROOT, env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`runner did not start: ${err}`)), 30_000);
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(Object.assign(new Error(`runner exited ${code}: ${err}`), { exitCode: code, stderr: err }));
    });
    child.stdout!.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(t);
      const { port } = JSON.parse(out.slice(0, nl)) as { port: number };
      resolve({
        child,
        url: `http://127.0.0.1:${port}`,
        stderr: () => err,
        async stop(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    });
  });
}

/** Spawn the runner expecting it to refuse to start; resolves with its exit code and stderr. */
export function runnerExit(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'shards/runner/main.ts'], { cwd: ROOT, env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const kill = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((r) => child.once('exit', (code) => (clearTimeout(kill), r({ code, stderr: err }))));
}

export async function api(base: string, path: string, init: RequestInit & { token?: string } = {}) {
  const { token, ...rest } = init;
  const res = await fetch(base + path, { ...rest, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(rest.headers as Record<string, string> | undefined) } });
  const text = await res.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: res.status, headers: res.headers, body };
}

/** Poll GET /jobs/:id until it leaves `running`; bounded (lib/time.ts's one bounded wait). */
export async function waitJob(base: string, id: string, token: string, timeoutMs = 60_000): Promise<any> {
  let body: any;
  const ended = await until(async () => ((body = (await api(base, `/jobs/${id}`, { token })).body), Boolean(body?.status && body.status !== 'running' && body.status !== 'queued')), timeoutMs, undefined, 250);
  if (!ended) throw new Error(`job ${id} still ${body?.status} after ${timeoutMs} ms`);
  return body;
}
