import { sleep } from '../../lib/time.ts';
import { callShard, joinUrl } from './http.ts';
import { COORD_OPTIONS, type CoordOptions } from './options.ts';
import { paramMismatches } from './params.ts';
import { isCount } from '../merge/schema.ts';
import { isObj, type ShardOutcome, type ShardResult } from '../merge/types.ts';
import type { OptionTable } from '../../lib/options.ts';

/** The shard (its name and URL, as its outcome carries them) and what to ask of it. */
export interface ShardJobSpec extends Pick<ShardOutcome, 'name' | 'url'> {
  /** `/bench-<test>-<target>` */
  endpoint: string;
  /** Query sent (strings), without `async`. */
  query: Record<string, string>;
}

/** The coordinator's poll period, log lines per poll and param-mismatch switch, and the rest of how one job is watched. */
export interface JobControl extends Pick<CoordOptions, 'pollMs' | 'logLines' | 'allowParamMismatch'> {
  token: string | undefined;
  /** The outer deadline, from the enqueue (SHARD_TIMEOUT_SEC). */
  timeoutMs: number;
  /** Floor of the margin past the shard's own announced plan (plannedMs) before it is excluded (default: the coordinator's table). */
  planGraceMs?: number;
  /** Bytes any one answer of the shard may have (default: the coordinator's table). */
  maxResponseBytes?: number;
  /** Option table of the test, to compare effective params by meaning (aliases, types); undefined: by name. */
  table: OptionTable | undefined;
  /** One line of a shard's progress or log (the caller prefixes the name). */
  onLine: (line: string) => void;
  /** Each poll's job status and progress object (the shared-stream barrier watches for `listen`). */
  onProgress?: (status: string, progress: unknown) => void;
  /** The caller stops watching (the local fleet's memory floor): polling ends with `aborted`; the shard's own job is the caller's to stop. */
  signal?: AbortSignal;
}

/**
 * A job record in either shape: the older `{status: ...|aborted, error: {code, message}}` or the
 * benchmark's `{status: running|done|failed, error: string}` with Rebound's code in `errorCode`
 * and `aborted: true` on an aborted job.
 */
interface JobObject {
  status?: string;
  progress?: unknown;
  logTail?: unknown;
  result?: ShardResult;
  /** The runner's expected wall time for the job (docs/runner-api.md, Job object). */
  plannedMs?: unknown;
  error?: unknown;
  errorCode?: unknown;
  aborted?: unknown;
}

/** How far past its announced plan a running job may go: max(grace, 25% of the plan). */
export const planMarginMs = (plannedMs: number, graceMs: number) => Math.max(graceMs, Math.ceil(plannedMs / 4));

/** A job's error as one line, with its code when the shard gave one. */
export function errText(e: unknown, code?: unknown): string {
  const obj = isObj(e) ? e : undefined;
  const msg = typeof e === 'string' ? e : obj && 'message' in obj ? String(obj.message) : JSON.stringify(e) ?? String(e);
  const c = typeof code === 'string' ? code : obj && typeof obj.code === 'string' ? obj.code : undefined;
  return c && !msg.startsWith(c) ? `${c}: ${msg}` : msg;
}

/**
 * One shard's job: enqueue with `?async=1`, refuse a shard that would run a different test than
 * asked (unknown or changed params), then poll `GET /jobs/:id` until it ends, it overruns the plan
 * it announced (`plannedMs` + max(planGraceMs, 25%)), or `timeoutMs` passes. Network errors while
 * polling are retried: a shard that stays unreachable ends as `timeout`; a redirect or an answer
 * over the byte cap is not retried (`rejected`). Never throws: every way a shard can fail becomes its outcome.
 */
export async function runShardJob(spec: ShardJobSpec, c: JobControl): Promise<ShardOutcome> {
  const t0 = Date.now();
  try {
    return await shardJob(spec, c, t0);
  } catch (err) {
    // A shard's answer must never take the run down: whatever slipped past the checks is its failure.
    return { name: spec.name, url: spec.url, durationMs: Date.now() - t0, status: 'failed', error: `coordinator could not read the shard's answers: ${(err as Error).message}` };
  }
}

async function shardJob(spec: ShardJobSpec, jc: JobControl, t0: number): Promise<ShardOutcome> {
  const c = { ...jc, planGraceMs: jc.planGraceMs ?? COORD_OPTIONS.planGraceSec.default * 1000, maxResponseBytes: jc.maxResponseBytes ?? COORD_OPTIONS.maxResponseBytes.default };
  const out = (o: Omit<ShardOutcome, 'name' | 'url' | 'durationMs'>): ShardOutcome => ({ name: spec.name, url: spec.url, durationMs: Date.now() - t0, ...o });
  const qs = new URLSearchParams({ ...spec.query, async: '1' }).toString();
  const r = await callShard(joinUrl(spec.url, `${spec.endpoint}?${qs}`), { method: 'POST', token: c.token, timeoutMs: 30_000, maxBytes: c.maxResponseBytes });
  if (r.refused) return out({ status: 'rejected', error: `POST ${spec.endpoint} ${r.refused}` });
  if (r.error) return out({ status: 'unreachable', error: `POST ${spec.endpoint} failed: ${r.error}` });
  const body: Record<string, unknown> = r.isJson && isObj(r.json) ? r.json : {};
  if (r.status < 200 || r.status > 299) {
    const msg = typeof body.message === 'string' ? `${body.code ?? ''} ${body.message}`.trim() : r.snippet;
    return out({ status: 'rejected', error: `POST ${spec.endpoint} answered ${r.status}: ${msg}` });
  }
  const unknown = Array.isArray(body.unknownParams) ? (body.unknownParams as unknown[]) : [];
  if (unknown.length && !c.allowParamMismatch) return out({ status: 'param-mismatch', error: `shard ignored parameters it does not know: ${unknown.join(', ')}` });
  if (isObj(body.effectiveParams) && !c.allowParamMismatch) {
    const diffs = paramMismatches(spec.query, body.effectiveParams, c.table);
    if (diffs.length) {
      return out({ status: 'param-mismatch', jobId: typeof body.jobId === 'string' ? body.jobId : undefined, error: `shard would run different parameters: ${diffs.map((d) => `${d.name} asked ${d.asked}, effective ${d.effective}`).join('; ')}` });
    }
  }
  if (typeof body.jobId !== 'string') {
    // An old runner that ignored async and answered the result itself.
    if (body.validity || body.test) return out({ status: 'done', result: body as ShardResult });
    return out({ status: 'rejected', error: `POST ${spec.endpoint} answered ${r.status} without a jobId: ${r.snippet}` });
  }
  const jobId = body.jobId;
  c.onLine(`job ${jobId} enqueued`);

  let lastLog: string | undefined;
  let lastProgress = '';
  let lastError = '';
  // The shard's own plan, timed on our clock from its acceptance (its startedAt is its clock); the
  // first one announced holds, so a shard cannot push its deadline out by announcing more later.
  const accepted = Date.now();
  let plan: { plannedMs: number; deadline: number } | undefined;
  const deadline = () => Math.min(t0 + c.timeoutMs, plan?.deadline ?? Infinity);
  // Bounded by the deadline: one poll every pollMs.
  while (Date.now() < deadline()) {
    await sleep(Math.min(c.pollMs, Math.max(0, deadline() - Date.now())));
    if (c.signal?.aborted) return out({ status: 'aborted', jobId, error: `aborted by the coordinator's caller: ${String(c.signal.reason ?? 'abort')}` });
    const p = await callShard(joinUrl(spec.url, `/jobs/${encodeURIComponent(jobId)}?logLines=${c.logLines}`), { token: c.token, timeoutMs: Math.max(1000, c.pollMs * 2), maxBytes: c.maxResponseBytes });
    if (p.refused) return out({ status: 'rejected', jobId, error: `GET /jobs/${jobId} ${p.refused}` });
    if (p.error || !p.isJson || p.status !== 200 || !isObj(p.json)) {
      const why = p.error ?? `GET /jobs/${jobId} answered ${p.status}: ${p.snippet}`;
      if (why !== lastError) c.onLine(`poll failed (retrying): ${why}`);
      lastError = why;
      continue;
    }
    lastError = '';
    const job = p.json as JobObject;
    const status = typeof job.status === 'string' ? job.status : '?';
    if (!plan && isCount(job.plannedMs)) plan = { plannedMs: job.plannedMs, deadline: accepted + job.plannedMs + planMarginMs(job.plannedMs, c.planGraceMs) };
    if (Array.isArray(job.logTail)) {
      const lines = job.logTail.map(String);
      const from = lastLog === undefined ? 0 : lines.lastIndexOf(lastLog) + 1;
      for (const l of lines.slice(from)) c.onLine(l);
      if (lines.length) lastLog = lines.at(-1);
    }
    c.onProgress?.(status, job.progress);
    const prog = job.progress === undefined ? '' : (JSON.stringify(job.progress) ?? '');
    if (prog && prog !== lastProgress) c.onLine(`${status} ${prog}`);
    lastProgress = prog;
    if (status === 'aborted' || (job.aborted === true && (status === 'failed' || status === 'done'))) return out({ status: 'aborted', jobId, error: errText(job.error ?? 'aborted by the runner', job.errorCode) });
    // The result is handed on as given: the merge's schema decides whether it can be believed.
    if (status === 'done') return job.result !== undefined && job.result !== null ? out({ status: 'done', jobId, result: job.result }) : out({ status: 'failed', jobId, error: 'job done without a result' });
    if (status === 'failed') return out({ status: 'failed', jobId, error: errText(job.error ?? 'failed', job.errorCode) });
  }
  const last = lastError ? ` (last poll: ${lastError})` : '';
  if (plan && plan.deadline < t0 + c.timeoutMs) {
    const margin = planMarginMs(plan.plannedMs, c.planGraceMs);
    return out({ status: 'timeout', jobId, error: `overran its own plan: announced plannedMs ${plan.plannedMs}, no final status ${Math.round((Date.now() - accepted) / 1000)} s after it was accepted (plan + max(--plan-grace-sec, 25%) = ${Math.round((plan.plannedMs + margin) / 1000)} s)${last}` });
  }
  return out({ status: 'timeout', jobId, error: `no final status within ${Math.round(c.timeoutMs / 1000)} s${last}` });
}
