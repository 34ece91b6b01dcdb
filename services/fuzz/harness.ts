/**
 * Plumbing for the fuzz suite: the chaos proxy as its own process, raw HTTP requests (node:http,
 * so any method, path and body goes out as generated), per-process RSS, and the two documented
 * error shapes every non-2xx answer must have.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { reapOnExit } from '../../lib/reaper.ts';
import type { FuzzRequest } from './generators.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Answer {
  status: number;
  contentType: string;
  text: string;
}

/**
 * Connections for one fuzz phase, reused (keep-alive) within it. Each phase makes its own and
 * destroys it after: a socket left idle past the server's keep-alive timeout (5 s) races the
 * server's close when reused, which a client sees as ECONNRESET through no fault of the server.
 */
export const phaseAgent = () => new Agent({ keepAlive: true, maxSockets: 8 });

/** Send one request; a missing answer (reset, hang past `timeoutMs`) is status 0 with the cause. */
export function send(port: number, req: FuzzRequest, agent: Agent, timeoutMs = 10_000): Promise<Answer> {
  return new Promise((resolve) => {
    // Node frames a body by itself only for methods it expects one with (not DELETE): say its length.
    const headers = req.body === undefined ? req.headers : { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) };
    const r = request({ host: '127.0.0.1', port, method: req.method, path: req.path, headers, agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (e) => resolve({ status: 0, contentType: '', text: `response error ${e.message}` }));
    });
    r.on('timeout', () => r.destroy(new Error('timeout')));
    r.on('error', (e: NodeJS.ErrnoException) => resolve({ status: 0, contentType: '', text: `request error ${e.code ?? e.message}` }));
    r.end(req.body);
  });
}

/** What is wrong with a Rebound service's answer, or undefined: no 5xx, and errors in `{statusCode,error,code,message}`. */
export function serviceAnswerProblem(a: Answer): string | undefined {
  if (a.status === 0) return `no answer: ${a.text}`;
  if (a.status >= 500) return `server error ${a.status}: ${a.text.slice(0, 200)}`;
  if (a.status < 400) return undefined;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(a.text) as Record<string, unknown>;
  } catch {
    return `${a.status} body is not JSON: ${a.text.slice(0, 200)}`;
  }
  const ok = body.statusCode === a.status && typeof body.error === 'string' && typeof body.code === 'string' && /^RR_ERR_[A-Z_]+$/.test(body.code) && typeof body.message === 'string' && !('stack' in body);
  return ok ? undefined : `${a.status} body not in the error shape: ${a.text.slice(0, 200)}`;
}

/** The chaos proxy answers in Toxiproxy's documented forms (docs/chaos-proxy.md); 5xx only for its listen errors. */
export function chaosAnswerProblem(a: Answer): string | undefined {
  if (a.status === 0) return `no answer: ${a.text}`;
  if (a.status < 400) return undefined;
  if (a.status === 404 && a.text === '404 page not found\n') return undefined;
  if (a.status === 403 && a.text === 'User agent not allowed\n') return undefined;
  if (a.status === 405 && a.text === '') return undefined;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(a.text) as Record<string, unknown>;
  } catch {
    return `${a.status} body is not JSON: ${a.text.slice(0, 200)}`;
  }
  // populate's failure body also lists the proxies handled so far.
  if (body.status !== a.status || typeof body.error !== 'string') return `${a.status} body not in Toxiproxy's error shape: ${a.text.slice(0, 200)}`;
  if (a.status >= 500 && !/^listen tcp|^address /.test(body.error)) return `chaos proxy internal error: ${body.error}`;
  return undefined;
}

export interface ChaosProcess {
  port: number;
  pid: number;
  child: ChildProcess;
  stop(): Promise<number | null>;
}

/** `chaos/toxiproxy/main.ts --port 0` as its own process (as `npm run chaos:proxy` runs it). */
export async function startChaosProcess(seed: number): Promise<ChaosProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'chaos/toxiproxy/main.ts', '--port', '0', '--seed', String(seed)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
  reapOnExit(child);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error('chaos proxy did not start')), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on http:\/\/[^\s]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(Number(m[1]));
      }
    });
    void exited.then((code) => reject(new Error(`chaos proxy exited ${code}`)));
  });
  return {
    port,
    pid: child.pid!,
    child,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Run `n` jobs with at most `width` in flight, stopping early at `deadline` (epoch ms). Returns how many ran. */
export async function pool(n: number, width: number, deadline: number, job: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  let done = 0;
  const lane = async () => {
    while (next < n && Date.now() < deadline) {
      const i = next++;
      await job(i);
      done++;
    }
  };
  await Promise.all(Array.from({ length: width }, lane));
  return done;
}
