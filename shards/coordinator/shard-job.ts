import { sleep } from '../../lib/time.ts';
import { callShard, joinUrl } from './http.ts';
import { paramMismatches } from './params.ts';
import type { ShardOutcome, ShardResult } from '../merge/types.ts';
import type { OptionTable } from '../../lib/options.ts';

export interface ShardJobSpec {
  name: string;
  url: string;
  /** `/bench-<test>-<target>` */
  endpoint: string;
  /** Query sent (strings), without `async`. */
  query: Record<string, string>;
}

export interface JobControl {
  token: string | undefined;
  pollMs: number;
  timeoutMs: number;
  logLines: number;
  /** Option table of the test, to compare effective params by meaning (aliases, types); undefined: by name. */
  table: OptionTable | undefined;
  allowParamMismatch: boolean;
  /** One line of a shard's progress or log (the caller prefixes the name). */
  onLine: (line: string) => void;
  /** Each poll's job status and progress object (the shared-stream barrier watches for `listen`). */
  onProgress?: (status: string, progress: unknown) => void;
}

interface JobObject {
  status?: string;
  progress?: unknown;
  logTail?: unknown;
  result?: ShardResult;
  error?: unknown;
  aborted?: unknown;
}

const errText = (e: unknown) => (typeof e === 'string' ? e : typeof e === 'object' && e && 'message' in e ? String((e as { message: unknown }).message) : JSON.stringify(e));

/**
 * One shard's job: enqueue with `?async=1`, refuse a shard that would run a different test than
 * asked (unknown or changed params), then poll `GET /jobs/:id` until it ends or `timeoutMs`
 * passes. Network errors while polling are retried: a shard that stays unreachable ends as
 * `timeout`. Never throws: every way a shard can fail becomes its outcome.
 */
export async function runShardJob(spec: ShardJobSpec, c: JobControl): Promise<ShardOutcome> {
  const t0 = Date.now();
  const out = (o: Omit<ShardOutcome, 'name' | 'url' | 'durationMs'>): ShardOutcome => ({ name: spec.name, url: spec.url, durationMs: Date.now() - t0, ...o });
  const qs = new URLSearchParams({ ...spec.query, async: '1' }).toString();
  const r = await callShard(joinUrl(spec.url, `${spec.endpoint}?${qs}`), { method: 'POST', token: c.token, timeoutMs: 30_000 });
  if (r.error) return out({ status: 'unreachable', error: `POST ${spec.endpoint} failed: ${r.error}` });
  const body = (r.isJson ? r.json : {}) as Record<string, unknown>;
  if (r.status < 200 || r.status > 299) {
    const msg = typeof body.message === 'string' ? `${body.code ?? ''} ${body.message}`.trim() : r.snippet;
    return out({ status: 'rejected', error: `POST ${spec.endpoint} answered ${r.status}: ${msg}` });
  }
  const unknown = Array.isArray(body.unknownParams) ? (body.unknownParams as unknown[]) : [];
  if (unknown.length && !c.allowParamMismatch) return out({ status: 'param-mismatch', error: `shard ignored parameters it does not know: ${unknown.join(', ')}` });
  if (body.effectiveParams && typeof body.effectiveParams === 'object' && !c.allowParamMismatch) {
    const diffs = paramMismatches(spec.query, body.effectiveParams as Record<string, unknown>, c.table);
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
  // Bounded by the deadline: one poll every pollMs.
  while (Date.now() - t0 < c.timeoutMs) {
    await sleep(Math.min(c.pollMs, Math.max(0, c.timeoutMs - (Date.now() - t0))));
    const p = await callShard(joinUrl(spec.url, `/jobs/${encodeURIComponent(jobId)}?logLines=${c.logLines}`), { token: c.token, timeoutMs: Math.max(1000, c.pollMs * 2) });
    if (p.error || !p.isJson || p.status !== 200) {
      const why = p.error ?? `GET /jobs/${jobId} answered ${p.status}: ${p.snippet}`;
      if (why !== lastError) c.onLine(`poll failed (retrying): ${why}`);
      lastError = why;
      continue;
    }
    lastError = '';
    const job = p.json as JobObject;
    if (Array.isArray(job.logTail)) {
      const lines = job.logTail.map(String);
      const from = lastLog === undefined ? 0 : lines.lastIndexOf(lastLog) + 1;
      for (const l of lines.slice(from)) c.onLine(l);
      if (lines.length) lastLog = lines.at(-1);
    }
    c.onProgress?.(job.status ?? '?', job.progress);
    const prog = job.progress === undefined ? '' : JSON.stringify(job.progress);
    if (prog && prog !== lastProgress) c.onLine(`${job.status ?? '?'} ${prog}`);
    lastProgress = prog;
    if (job.status === 'done') return job.result ? out({ status: 'done', jobId, result: job.result }) : out({ status: 'failed', jobId, error: 'job done without a result' });
    // Runners report an abort as `failed` + `aborted: true` (the benchmark's poller knows three statuses).
    if (job.status === 'failed') return out({ status: job.aborted === true ? 'aborted' : 'failed', jobId, error: errText(job.error ?? 'failed') });
    if (job.status === 'aborted') return out({ status: 'aborted', jobId, error: errText(job.error ?? 'aborted by the runner') });
  }
  return out({ status: 'timeout', jobId, error: `no final status within ${Math.round(c.timeoutMs / 1000)} s${lastError ? ` (last poll: ${lastError})` : ''}` });
}
