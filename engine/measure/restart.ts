import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { sleep } from '../../lib/time.ts';
import { runShellCommand, type ShellCommandResult } from './shell-command.ts';
import type { LocalNodes, NodeRestart } from './local-nodes.ts';
import { parseJson } from '../targets/payload.ts';
import { untilPort, type PortProbeReport } from './port-probe.ts';
import { ReboundError } from '../../lib/errors.ts';

/**
 * A target's restart, the one mechanism for every runner that restarts one: avalanche's forced
 * restart and deploy-impact's, and the weather's `deploy` (chaos/weather). A target the runner
 * started is signalled (kill, term, rolling) through its LocalNodes; one at a --url is restarted by
 * the operator's command or hook from the runner's environment, never from a request.
 */
export const RESTART_MODES = ['kill', 'term', 'rolling', 'command', 'hook'] as const;
export type RestartMode = (typeof RESTART_MODES)[number];

/** Where restarts of modes `command` and `hook` come from: the runner's environment only. */
export interface RestartConfig {
  /** Shell command for `--restart command` (AVALANCHE_RESTART_COMMAND), e.g. `railway restart -s api --yes`. */
  command?: string;
  /** URL POSTed for `--restart hook` (AVALANCHE_RESTART_HOOK_URL). */
  hookUrl?: string;
  /** Optional bearer for the hook (AVALANCHE_RESTART_HOOK_TOKEN). */
  hookToken?: string;
  /** Give up on the command or hook after this long (AVALANCHE_RESTART_TIMEOUT_MS). @default 120000 */
  timeoutMs?: number;
}

export function restartConfigFromEnv(env: Record<string, string | undefined> = process.env): RestartConfig {
  const timeout = env.AVALANCHE_RESTART_TIMEOUT_MS;
  const timeoutMs = timeout === undefined || timeout === '' ? undefined : Number(timeout);
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs >= 100 && timeoutMs <= 3_600_000)) {
    throw new ReboundError('RR_ERR_OPTION_INVALID', `env option "AVALANCHE_RESTART_TIMEOUT_MS" must be an integer between 100 and 3600000 (got ${JSON.stringify(timeout)})`, { details: { option: 'AVALANCHE_RESTART_TIMEOUT_MS' } });
  }
  return {
    ...(env.AVALANCHE_RESTART_COMMAND ? { command: env.AVALANCHE_RESTART_COMMAND } : {}),
    ...(env.AVALANCHE_RESTART_HOOK_URL ? { hookUrl: env.AVALANCHE_RESTART_HOOK_URL } : {}),
    ...(env.AVALANCHE_RESTART_HOOK_TOKEN ? { hookToken: env.AVALANCHE_RESTART_HOOK_TOKEN } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  };
}


/** One replaced worker, as the replay server's reload route reports it. */
export interface WorkerReload {
  oldPid: number;
  newPid: number;
  startedAt: number | string;
  endedAt: number | string;
}

/** The restart as executed. Times are ms since epoch on the runner's clock. */
export interface RestartRecord {
  mode: RestartMode;
  /** What the runner sent: SIGKILL, SIGTERM, SIGUSR2-equivalent admin reload ('reload'), or null (command, hook). */
  signal: string | null;
  /** Variant of the mode: 'nodes' (one process per node) or 'workers' (the replay server's worker reload). */
  variant: 'nodes' | 'workers' | 'external';
  startedAt: string;
  startedAtMs: number;
  endedAtMs: number;
  /**
   * Time the server (any node) was not serving, when the runner knows it: from the signal (or the
   * exit it observed) to the new process listening, summed over nodes for rolling restarts, the
   * longest node for simultaneous ones. Null when the runner cannot know (a remote command or hook).
   */
  serverDownMs: number | null;
  ok: boolean;
  error: string | null;
  /** RR_ERR_RELOAD_UNSUPPORTED when the target has no worker reload, RR_ERR_RESTART_FAILED otherwise. */
  code: 'RR_ERR_RESTART_FAILED' | 'RR_ERR_RELOAD_UNSUPPORTED' | null;
  nodes: NodeRestart[];
  workers: WorkerReload[];
  command: ShellCommandResult | null;
  hook: { status: number | null; durationMs: number } | null;
  /** TCP probes of every node's port from the restart to the end of the herd: did the port keep accepting? */
  portProbe: PortProbeReport | null;
}

export interface RestartContext {
  /** Processes behind the one port (the replay server's workers): rolling then reloads them one at a time. */
  workers: number;
  /** kill/term: restart only the last N nodes (0 = every node). */
  restartNodes: number;
  rollingGapMs: number;
  termGraceMs: number;
  broadcastKey: string;
  mode: RestartMode;
  nodes: LocalNodes | undefined;
  /** Base URLs of the target's nodes (for the worker reload and the command's environment). */
  urls: readonly string[];
  config: RestartConfig;
  runId: string;
  target: string;
}

/** Run the restart; never throws: failures land in `ok`/`error` and make the run invalid. */
export async function performRestart(ctx: RestartContext): Promise<RestartRecord> {
  const startedAtMs = Date.now();
  const rec: RestartRecord = {
    mode: ctx.mode,
    signal: null,
    variant: ctx.mode === 'command' || ctx.mode === 'hook' || !ctx.nodes ? 'external' : ctx.workers > 1 && ctx.mode === 'rolling' ? 'workers' : 'nodes',
    startedAt: new Date(startedAtMs).toISOString(),
    startedAtMs,
    endedAtMs: startedAtMs,
    serverDownMs: null,
    ok: true,
    error: null,
    code: null,
    nodes: [],
    workers: [],
    command: null,
    hook: null,
    portProbe: null,
  };
  try {
    if ((ctx.mode === 'kill' || ctx.mode === 'term') && ctx.nodes) {
      rec.signal = ctx.mode === 'kill' ? 'SIGKILL' : 'SIGTERM';
      const signal = rec.signal as 'SIGKILL' | 'SIGTERM';
      const k = ctx.nodes.handles.length;
      const first = ctx.restartNodes ? k - Math.min(ctx.restartNodes, k) : 0;
      rec.nodes = await Promise.all(ctx.nodes.handles.slice(first).map((_, j) => ctx.nodes!.restartNode(first + j, signal, ctx.termGraceMs)));
    } else if (ctx.mode === 'rolling' && rec.variant === 'workers') {
      rec.signal = 'reload';
      rec.workers = await reloadWorkers(ctx.urls[0]!, ctx.broadcastKey, ctx.config.timeoutMs ?? 120_000);
    } else if (ctx.mode === 'rolling' && ctx.nodes) {
      rec.signal = 'SIGTERM';
      for (let i = 0; i < ctx.nodes.handles.length; i++) {
        // The gap runs from the previous node listening again (timers may fire a millisecond early).
        const due = (rec.nodes.at(-1)?.listeningAt ?? 0) + ctx.rollingGapMs;
        for (let k = 0; i > 0 && Date.now() < due && k < 100; k++) await sleep(due - Date.now() + 1);
        const n = await ctx.nodes.restartNode(i, 'SIGTERM', ctx.termGraceMs);
        rec.nodes.push(n);
        if (n.error) break; // do not take the next node down while this one is not back
      }
    } else if (ctx.mode === 'command') {
      // The command is the operator's, from the runner's environment.
      rec.command = await runShellCommand(ctx.config.command!, {
        env: { REBOUND_TARGET: ctx.target, REBOUND_TARGET_URLS: ctx.urls.join(','), REBOUND_TARGET_PIDS: ctx.nodes?.handles.map((h) => h.pid).join(',') ?? '', REBOUND_RUN_ID: ctx.runId },
        timeoutMs: ctx.config.timeoutMs ?? 120_000,
      });
      if (rec.command.exitCode !== 0) failRestart(rec, `restart command failed (exit ${rec.command.exitCode ?? rec.command.signal}): ${rec.command.outputTail.trim().slice(-300) || '(no output)'}`);
    } else if (ctx.mode === 'hook') {
      rec.hook = await callHook(ctx);
      if (rec.hook.status === null || rec.hook.status < 200 || rec.hook.status >= 300) failRestart(rec, `restart hook answered ${rec.hook.status ?? 'nothing'}`);
    } else {
      failRestart(rec, `--restart ${ctx.mode} needs a target the runner started`);
    }
  } catch (err) {
    failRestart(rec, (err as Error).message);
  }
  for (const n of rec.nodes) if (n.error) failRestart(rec, n.error);
  rec.endedAtMs = Date.now();
  const downs = downTimes(rec.nodes);
  if (downs.length && downs.length === rec.nodes.length) rec.serverDownMs = ctx.mode === 'rolling' ? downs.reduce((a, b) => a + b, 0) : Math.max(...downs);
  return rec;
}

/** Fold in what the supervisor saw (a command or hook that stopped a local node). */
export function addSupervised(rec: RestartRecord, supervised: readonly NodeRestart[]): void {
  if (!supervised.length) return;
  rec.nodes.push(...supervised);
  for (const n of supervised) if (n.error) failRestart(rec, n.error);
  const downs = downTimes(supervised);
  if (downs.length) rec.serverDownMs = Math.max(...downs);
}

/** The restart failed: the first failure's message and code stay. */
function failRestart(rec: RestartRecord, msg: string): void {
  rec.ok = false;
  rec.error ??= msg;
  rec.code ??= /does not support worker reload/.test(msg) ? 'RR_ERR_RELOAD_UNSUPPORTED' : 'RR_ERR_RESTART_FAILED';
}

const downTimes = (nodes: readonly NodeRestart[]) => nodes.map((n) => n.downMs).filter((d): d is number => d !== null);

/**
 * The replay server's rolling worker reload: `POST /_admin/reload` answers 200 with the replaced
 * workers once every worker is new, 409 while another reload runs. A 404 means this build of the
 * target has no reload.
 */
export async function reloadWorkers(base: string, key: string, timeoutMs: number): Promise<WorkerReload[]> {
  const res = await post(new URL('/_admin/reload', base).toString(), '{}', key, timeoutMs);
  // A target without the route may answer anything.
  const body = (parseJson(res.body) ?? {}) as { workers?: WorkerReload[]; code?: string; message?: string };
  const why = body.code ? `${body.code}: ${body.message ?? ''}` : res.body.slice(0, 200);
  if (res.status === 404 || res.status === 405 || body.code === 'RR_ERR_RELOAD_UNAVAILABLE') throw new Error(`the target does not support worker reload (POST /_admin/reload answered ${res.status}${body.code ? ` ${body.code}` : ''})`);
  if (res.status === 409) throw new Error(`the target is already reloading its workers (409 ${why})`);
  if (res.status === 401 || res.status === 403) throw new Error(`the worker reload was refused (${res.status} ${why}): set --broadcast-key to the target's key`);
  if (res.status !== 200) throw new Error(`worker reload answered ${res.status}: ${why}`);
  if (!Array.isArray(body.workers)) throw new Error('worker reload answered 200 without a workers list');
  return body.workers;
}

async function callHook(ctx: RestartContext) {
  const t0 = Date.now();
  const body = JSON.stringify({ runId: ctx.runId, target: ctx.target, urls: ctx.urls, pids: ctx.nodes?.handles.map((h) => h.pid) ?? [], requestedAt: new Date(t0).toISOString() });
  try {
    const res = await post(ctx.config.hookUrl!, body, ctx.config.hookToken ?? '', ctx.config.timeoutMs ?? 120_000);
    return { status: res.status, durationMs: Date.now() - t0 };
  } catch {
    return { status: null, durationMs: Date.now() - t0 };
  }
}

function post(url: string, body: string, bearer: string, timeoutMs: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = (url.startsWith('https:') ? httpsRequest : request)(url, {
      method: 'POST',
      timeout: timeoutMs,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => void (text.length < 65_536 && (text += c)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** How long after a restart command or hook returns its target's port is watched for going down. */
const RESTART_SEEN_WITHIN_MS = 5000;

/** The run can restart a target at `url` without having started it: the operator configured a command or hook. */
export const canRestartUrl = (config: RestartConfig): boolean => config.command !== undefined || config.hookUrl !== undefined;

/**
 * One restart of the target a run holds, as a deploy does it: the instance the runner started
 * (`nodes`) gets SIGTERM and is started again on its port; a target at `url` is restarted by the
 * operator's command or hook. Undefined when the run can do neither.
 */
export function deployRestart(o: { target: string; runId: string; url: string; nodes: LocalNodes | undefined; config: RestartConfig }): (() => Promise<RestartRecord>) | undefined {
  const mode: RestartMode | undefined = o.nodes ? 'term' : o.config.command ? 'command' : o.config.hookUrl ? 'hook' : undefined;
  if (!mode) return undefined;
  return async () => {
    const rec = await performRestart({ mode, nodes: o.nodes, urls: o.nodes?.urls ?? [o.url], config: o.config, runId: o.runId, target: o.target, workers: 1, restartNodes: 0, rollingGapMs: 0, termGraceMs: 10_000, broadcastKey: '' });
    // A command or hook may return before the old process has let go of its port, or before the
    // new one listens: when the port refuses within a few seconds, the restart lasts until it
    // accepts again. One that never refuses restarted before returning (or refused too briefly to see).
    if (rec.ok && !o.nodes && (await untilPort(o.url, 'refused', { intervalMs: 100, timeoutMs: RESTART_SEEN_WITHIN_MS })) !== null) {
      const back = await untilPort(o.url, 'accepting', { intervalMs: 100, timeoutMs: o.config.timeoutMs ?? 120_000 });
      if (back === null) failRestart(rec, `the target at ${o.url} did not accept connections again within ${o.config.timeoutMs ?? 120_000} ms of its restart`);
      rec.endedAtMs = Date.now();
    }
    return rec;
  };
}
