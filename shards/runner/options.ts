import { ReboundError } from '../../lib/errors.ts';
import { defaultsOf, type OptionTable, type OptionValues } from '../../lib/options.ts';
import { ALLOW_PATTERN } from '../../engine/measure/addresses.ts';
import { isLoopbackHost } from '../../services/common/service-main.ts';

/**
 * Shortest BENCH_RUNNER_TOKEN a runner accepts on a non-loopback address. 16 characters of a
 * random hex or base64url secret are 64-96 bits, far beyond what guessing over HTTP can reach;
 * what a shorter one usually is, is a placeholder (`secret`, `s`, `changeme`) that a stranger
 * guesses first. Loopback binds keep any token (tests and the README's local examples use `s`):
 * only this machine reaches them.
 */
export const MIN_REMOTE_TOKEN_LENGTH = 16;

/** The runner's bind rule: a non-loopback HOST needs a token, and one of MIN_REMOTE_TOKEN_LENGTH characters or more. */
export function checkBindToken(host: string, token: string): void {
  if (isLoopbackHost(host)) return;
  if (!token) {
    throw new ReboundError('RR_ERR_RUNNER_UNSAFE_BIND', `refusing to listen on ${host} without BENCH_RUNNER_TOKEN: anyone reaching this address could start load runs. Set BENCH_RUNNER_TOKEN (e.g. $(openssl rand -hex 24)) or bind HOST=127.0.0.1`);
  }
  if (token.length < MIN_REMOTE_TOKEN_LENGTH) {
    throw new ReboundError('RR_ERR_RUNNER_WEAK_TOKEN', `refusing to listen on ${host} with a BENCH_RUNNER_TOKEN of ${token.length} characters: a non-loopback runner needs ${MIN_REMOTE_TOKEN_LENGTH} or more (a short one is guessable). Use a random one, e.g. BENCH_RUNNER_TOKEN=$(openssl rand -hex 24), or bind HOST=127.0.0.1`);
  }
}

/** The whole TARGET_URL_ALLOW list: malformed entries stop the runner at startup (exit 2) instead of being skipped. */
const ALLOW_LIST = new RegExp(`^(?:(?:${ALLOW_PATTERN.source.replace(/\^|\$/g, '')})(?:\\s*,\\s*|$))*$`, 'i');

/** The runner service's own options (CLI flags or env). */
export const RUNNER_SERVICE_OPTIONS = {
  port: { type: 'int', default: 3001, min: 0, max: 65535, env: ['PORT'], doc: "port to listen on (the benchmark's default 3001; 0 = any free port, reported on stdout)" },
  host: { type: 'string', default: '127.0.0.1', env: ['HOST'], doc: 'address to bind; anything but loopback requires BENCH_RUNNER_TOKEN' },
  token: { type: 'string', default: '', env: ['BENCH_RUNNER_TOKEN'], doc: 'bearer token for every route but GET /health and GET /time (empty = open, loopback only)' },
  resultsDir: { type: 'string', default: 'results', env: ['RESULTS_DIR'], doc: 'where jobs and results are stored (survives restarts)' },
  targetUrlAllow: { type: 'string', default: '', pattern: ALLOW_LIST, env: ['TARGET_URL_ALLOW'], doc: 'host patterns a request may name in serverUrl / cableUrl+broadcastUrl / wsUrl+httpUrl, comma-separated (*.railway.internal, 127.0.0.1:*, host:8080; no port = the default port only); the configured targets\' own URLs are always allowed' },
  stopGraceMs: { type: 'int', default: 20_000, min: 1000, max: 600_000, env: ['RUNNER_STOP_GRACE_MS'], doc: 'on SIGTERM, how long running jobs get to close their clients and record a partial result' },
  keepJobs: { type: 'int', default: 1000, min: 1, max: 1_000_000, env: ['RUNNER_KEEP_JOBS'], doc: 'finished jobs kept with their result and report; the oldest are removed first' },
  keepBytes: { type: 'int', default: 2 * 1024 ** 3, min: 0, max: Number.MAX_SAFE_INTEGER, env: ['RUNNER_KEEP_BYTES'], doc: 'bytes of job records, results and reports kept (default 2 GiB); the oldest jobs are removed first' },
  keepDays: { type: 'number', default: 30, min: 0, max: 36500, env: ['RUNNER_KEEP_DAYS'], doc: 'finished jobs older than this many days are removed with their files' },
  minFreeBytes: { type: 'int', default: 256 * 1024 ** 2, min: 0, max: Number.MAX_SAFE_INTEGER, env: ['RUNNER_MIN_FREE_BYTES'], doc: 'new jobs are refused with 507 while the results disk has less free than this (default 256 MiB)' },
  persistMs: { type: 'int', default: 2000, min: 100, max: 60_000, env: ['RUNNER_PERSIST_MS'], doc: "how often a running job's record (progress, log tail) is written, so a job recovered after SIGKILL shows how far it got" },
} as const satisfies OptionTable;

/** The job store's retention and persistence knobs from the service's options (the defaults when none are given). */
export function jobStoreLimits(o: OptionValues<typeof RUNNER_SERVICE_OPTIONS> = defaultsOf(RUNNER_SERVICE_OPTIONS)) {
  return { maxJobs: o.keepJobs, maxBytes: o.keepBytes, maxAgeMs: o.keepDays * 86_400_000, minFreeBytes: o.minFreeBytes, persistMs: o.persistMs };
}

export type JobStoreLimits = ReturnType<typeof jobStoreLimits>;
