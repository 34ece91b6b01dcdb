import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../services/uws/server.ts';
import { reapOnExit } from './reaper.ts';
import { logicalLines } from './doc-blocks.ts';

/** The doc-test blocks of the docs (lib/doc-blocks.ts) and how lib/docs-run.test.ts runs them. */

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * Each doc-test block, by marker id: the scale substitutions it runs with (each must match the
 * block's text, so an edit that drops one fails here instead of running at full scale), and what
 * its foreground commands must exit with. Port numbers are not listed: every port the block names
 * (`127.0.0.1:N`, `--port N`, `PORT=N`) becomes a free one.
 */
export interface DocTest {
  subs: [RegExp | string, string][];
  timeoutMs: number;
  /**
   * Services the block expects running (it does not start them itself): the test starts a replay
   * server and a runner service (TARGET_URL_ALLOW=127.0.0.1:*, as the block's comment says), and
   * `{REPLAY}`, `{RUNNER}`, `{TOKEN}` in `subs` stand for their addresses and the runner's token.
   */
  services?: true;
  /** Output patterns (global) and how often each must occur at least. */
  outputs?: [RegExp, number][];
}

export const DOC_TESTS: Record<string, DocTest> = {
  'readme-two-shard': { subs: [['PER_SHARD_N=5000', 'PER_SHARD_N=20'], ['--hold 30', '--hold 1']], timeoutMs: 180_000 },
  'coordinator-two-shard': {
    subs: [
      ['PER_SHARD_N=20000', 'PER_SHARD_N=20'],
      ['--hold 120', '--hold 1'],
      ['--n 2000 --msgs 120', '--n 10 --msgs 6 --interval 200 --jitter 999999 --settle 2000'],
      ['--target socketio', '--target socketio --n 10 --msgs 3 --interval 100'],
    ],
    timeoutMs: 240_000,
  },
  'runner-api-curls': {
    services: true,
    // Every synchronous bench curl answers a result (8: jitter x3, idle x2, latency, throughput,
    // whispers; a parameter the runner refuses answers a 400 instead), the error lines their codes.
    outputs: [
      [/\{"test":"/g, 8],
      [/RR_ERR_OPTION_UNKNOWN/g, 1],
      [/RR_ERR_TARGET_URL_REFUSED/g, 1],
      [/"status": "done"/g, 2],
    ],
    subs: [
      ['BENCH_RUNNER_TOKEN=...', 'BENCH_RUNNER_TOKEN={TOKEN}'],
      ['http://127.0.0.1:3001', '{RUNNER}'],
      [/127\.0\.0\.1:80[89]0/g, '{REPLAY}'],
      [/n=\d+/g, 'n=10'],
      [/&duration=\d+/g, '&duration=2'],
      [/&msgs=\d+/g, '&msgs=4'],
      [/&interval=500/g, '&interval=200'],
      [/&jitter=15/g, '&jitter=1'],
      ['&hold=120', '&hold=1'],
      ['&serverWorkers=8', '&serverWorkers=1'],
      ['&total=100', '&total=10'],
      ['&rooms=10', '&rooms=2'],
      // Runs without `msgs` publish the default 60 at 500 ms: 30 s each.
      ['&samplesCap=2000', '&samplesCap=2000&msgs=4'],
      ['&seed=1003&async=1', '&seed=1003&msgs=4&interval=200&async=1'],
      // No job is running by then, so the 429 line runs an idle test: held 1 s, not the default minute.
      ['bench-idle-ws?n=10"', 'bench-idle-ws?n=10&hold=1"'],
    ],
    timeoutMs: 240_000,
  },
};

/** Every port the block names, each to its own free port (the same number to the same port throughout). */
export async function freePorts(text: string): Promise<string> {
  const re = /(127\.0\.0\.1:|localhost:|--port |PORT=)(\d{2,5})\b/g;
  const map = new Map<string, number>();
  for (const m of text.matchAll(re)) if (!map.has(m[2]!)) map.set(m[2]!, await freePort('127.0.0.1'));
  return text.replace(re, (_, pre: string, n: string) => `${pre}${map.get(n)}`);
}

/**
 * The block's own lines in one bash (so its variables and `export`s carry from line to line), with
 * `set -e`: a failing command fails the block. A line the docs background with `&` is a service:
 * the next foreground line waits until the ports those services name accept connections, as a
 * reader waits for their listening lines. The coordinator polls its shards every 250 ms instead of
 * 5 s (POLL_MS, its documented env), so a tiny run is not mostly waiting. Everything runs in its own process group, killed (TERM, then KILL) at the end.
 */
export async function runShellBlock(text: string, cwd: string, timeoutMs: number): Promise<{ code: number | null; output: string; script: string }> {
  const lines: string[] = ['set -eo pipefail', 'wait_port() { for _ in $(seq 600); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; kill -0 $2 2>/dev/null || { echo "the service for port $1 exited before listening" >&2; return 1; }; sleep 0.1; done; echo "nothing listens on $1" >&2; return 1; }'];
  let starting: string[] = [];
  for (const l of logicalLines(text)) {
    const bg = /&\s*(#.*)?$/.test(l) && !/&&\s*(#.*)?$/.test(l);
    if (!bg && starting.length) {
      lines.push(...starting.map((p) => `wait_port ${p} $pid_${p}`));
      starting = [];
    }
    lines.push(l);
    const port = /(?:--port |PORT=)(\d+)/.exec(l)?.[1];
    if (bg && port) {
      lines.push(`pid_${port}=$!`);
      starting.push(port);
    }
  }
  const script = lines.join('\n');
  const child = spawn('bash', ['-c', script], { cwd: ROOT, detached: true, env: { ...process.env, RESULTS_DIR: join(cwd, 'results'), POLL_MS: '250', npm_config_update_notifier: 'false' }, stdio: ['ignore', 'pipe', 'pipe'] });
  reapOnExit(child);
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const group = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      // the group is gone
    }
  };
  const timer = setTimeout(() => group('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  clearTimeout(timer);
  // The block's background services (and their workers) are in the group: stop them, then make sure.
  group('SIGTERM');
  for (let i = 0; i < 50 && groupAlive(child.pid!); i++) await new Promise((r) => setTimeout(r, 100));
  group('SIGKILL');
  return { code, output, script };
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
