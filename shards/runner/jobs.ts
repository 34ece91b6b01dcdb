import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Emitter } from '../../lib/emitter.ts';
import { ReboundError } from '../../lib/errors.ts';
import { safeText } from '../../lib/escape.ts';
import { redactUrlCredentialsDeep } from '../../lib/redact.ts';
import { jobStoreLimits, type JobStoreLimits } from './options.ts';
import { writeJobReport } from './report.ts';
import type { JobProgress, RunContext } from './types.ts';

/** The benchmark's poller knows exactly these three; an aborted job is `failed` with `aborted: true`. */
export type JobStatus = 'running' | 'done' | 'failed';

export interface Job {
  id: string;
  route: string;
  test: string;
  target: string;
  status: JobStatus;
  params: Record<string, unknown>;
  unknownParams: string[];
  createdAt: number;
  startedAt?: number;
  endedAt?: number;
  durationMs?: number;
  plannedMs: number;
  /** The command that reruns this job (a curl line, no token value): shown in its HTML report. */
  command?: string;
  progress: JobProgress;
  /** Present in memory only until the job ends; afterwards read from `<RESULTS_DIR>/<id>.json`. */
  result?: Record<string, unknown>;
  hasResult?: boolean;
  /** Bytes of its record, result and report once finished (for the RUNNER_KEEP_BYTES cap). */
  bytes?: number;
  /** Set when the run was cut short by SIGTERM; the partial result stays readable. */
  aborted?: boolean;
  /** A string, as the benchmark's poller prints it; Rebound's code is in `errorCode`. */
  error?: string;
  errorCode?: string;
}

export interface JobEvents {
  update: (job: Job) => void;
  log: (line: string) => void;
  end: (job: Job) => void;
}

const LOG_KEEP = 500;
/** How long an aborted runner may take to close its clients and hand back a partial result. */
const ABORT_GRACE_MS = 10_000;
export const JOB_ID = /^[0-9a-f]{12}$/;

const INDEX = 'index.json';

/**
 * Jobs of one runner shard: one heavy job at a time (a second is refused, not queued: a shard
 * that runs two loads at once measures neither), every state change written to RESULTS_DIR so
 * `GET /jobs/:id` answers after a restart, and a log ring plus progress events for followers.
 */
export class JobStore {
  private readonly jobs = new Map<string, Job>();
  /** Log rings of jobs run or read since startup; older ones are read from their job file on demand. */
  private readonly logs = new Map<string, string[]>();
  private readonly emitters = new Map<string, Emitter<JobEvents>>();
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  private readonly jobsDir: string;
  readonly limits: JobStoreLimits;

  constructor(
    readonly resultsDir: string,
    limits: Partial<JobStoreLimits> = {},
  ) {
    this.limits = { ...jobStoreLimits(), ...limits };
    this.jobsDir = join(resultsDir, 'jobs');
    mkdirSync(this.jobsDir, { recursive: true });
    this.load();
    this.prune();
  }

  /**
   * Jobs from earlier runs of this shard, from `jobs/index.json` (one read, however many jobs);
   * without an index (first start, or a torn one) every job file is read once and the index
   * written. A job still marked running died with its process: its own file (written every
   * `persistMs` while it ran) says how far it got.
   */
  private load(): void {
    // Missing or torn: rebuilt from the job files below.
    const idx = readJson<{ jobs?: Job[] } | null>(join(this.jobsDir, INDEX));
    let metas = Array.isArray(idx?.jobs) ? idx.jobs : undefined;
    let dirty = metas === undefined;
    metas ??= readdirSync(this.jobsDir)
      .filter((f) => f.endsWith('.json') && JOB_ID.test(f.slice(0, -5)))
      .flatMap((f) => this.readJobFile(f.slice(0, -5)) ?? []);
    for (let job of metas) {
      if (!job || typeof job.id !== 'string' || !JOB_ID.test(job.id)) continue;
      const died = job.status === 'running' || (job.status as string) === 'queued';
      // The index has the job as it started; its own file has the last persisted progress and log.
      if (died) job = this.readJobFile(job.id) ?? job;
      const changed = normaliseStored(job) || died;
      if (died) {
        job.status = 'failed';
        job.error = `the runner process ended while this job ran (killed or crashed): no result; last progress ${JSON.stringify(job.progress)}`;
        job.errorCode = 'RR_ERR_RUN_FAILED';
        job.endedAt ??= Date.now();
      }
      this.jobs.set(job.id, job);
      if (changed) this.persistJob(job);
      dirty ||= changed;
    }
    if (dirty) this.writeIndex();
  }

  private readJobFile(id: string): Job | undefined {
    // A torn file from a crash mid-write is skipped, never fatal for the service.
    const rec = readJson<(Job & { logTail?: string[] }) | null>(join(this.jobsDir, `${id}.json`));
    if (rec === undefined || rec === null) return undefined;
    const { logTail, ...job } = rec;
    if (!this.logs.has(id) && Array.isArray(logTail)) this.logs.set(id, logTail);
    return job;
  }

  private writeIndex(): void {
    writeAtomic(join(this.jobsDir, INDEX), JSON.stringify({ version: 1, jobs: [...this.jobs.values()].map(({ result: _r, ...m }) => m) }));
  }

  /** The job file holds everything but the result, which is written once, to `<id>.json`. */
  private persistJob(job: Job): void {
    if (job.result && (job.status === 'done' || job.aborted)) {
      writeAtomic(join(this.resultsDir, `${job.id}.json`), JSON.stringify(job.result, null, 2) + '\n');
      job.hasResult = true;
    }
    const { result: _r, ...meta } = job;
    writeAtomic(join(this.jobsDir, `${job.id}.json`), JSON.stringify({ ...meta, logTail: this.logTail(job.id, LOG_KEEP) }));
  }

  private persist(job: Job): void {
    this.persistJob(job);
    this.writeIndex();
  }

  /** The files a job owns: its record, its result and its HTML report. */
  private filesOf(id: string): string[] {
    return [join(this.jobsDir, `${id}.json`), join(this.resultsDir, `${id}.json`), join(this.resultsDir, `${id}.html`)];
  }

  private bytesOf(job: Job): number {
    if (typeof job.bytes === 'number') return job.bytes;
    let n = 0;
    for (const f of this.filesOf(job.id)) {
      try {
        n += statSync(f).size;
      } catch {
        // Not written (no result, no report).
      }
    }
    if (job.status !== 'running') job.bytes = n;
    return n;
  }

  /**
   * Retention: finished jobs beyond `maxJobs`, past `maxAgeMs`, or while their files exceed
   * `maxBytes`, are removed oldest first with their result and report. Running jobs are never
   * touched. Returns the removed ids.
   */
  prune(now = Date.now()): string[] {
    const finished = [...this.jobs.values()].filter((j) => j.status !== 'running' && !this.running.has(j.id)).sort((a, b) => a.createdAt - b.createdAt);
    let count = finished.length;
    let bytes = finished.reduce((n, j) => n + this.bytesOf(j), 0);
    const removed: string[] = [];
    for (const j of finished) {
      if (count <= this.limits.maxJobs && bytes <= this.limits.maxBytes && now - (j.endedAt ?? j.createdAt) <= this.limits.maxAgeMs) break;
      for (const f of this.filesOf(j.id)) rmSync(f, { force: true });
      this.jobs.delete(j.id);
      this.logs.delete(j.id);
      count--;
      bytes -= this.bytesOf(j);
      removed.push(j.id);
    }
    if (removed.length) this.writeIndex();
    return removed;
  }

  /** Free bytes on the results disk (statfs), or undefined where the platform cannot say. */
  freeBytes(): number | undefined {
    try {
      const st = statfsSync(this.resultsDir);
      return Number(st.bavail) * Number(st.bsize);
    } catch {
      return undefined;
    }
  }

  /** Refuse a new job when the results disk is below the floor: a run whose result cannot be stored is wasted. */
  checkDisk(): void {
    const free = this.freeBytes();
    if (free !== undefined && free < this.limits.minFreeBytes) {
      throw new ReboundError('RR_ERR_RESULTS_DISK_FULL', `the results disk (${this.resultsDir}) has ${free} bytes free, below RUNNER_MIN_FREE_BYTES=${this.limits.minFreeBytes}; free space or lower the floor before starting jobs`, { details: { freeBytes: free, minFreeBytes: this.limits.minFreeBytes } });
    }
  }

  /** A finished job's result: in memory while it ends, then from disk (results can be megabytes). */
  resultOf(job: Job): Record<string, unknown> | undefined {
    if (job.result) return job.result;
    if (!job.hasResult) return undefined;
    return readJson<Record<string, unknown>>(join(this.resultsDir, `${job.id}.json`));
  }

  get busy(): Job | undefined {
    for (const id of this.running.keys()) return this.jobs.get(id);
    return undefined;
  }

  get(id: string): Job | undefined {
    return JOB_ID.test(id) ? this.jobs.get(id) : undefined;
  }

  list(limit = 50): Job[] {
    return [...this.jobs.values()].sort((a, b) => b.createdAt - a.createdAt).slice(0, limit);
  }

  logTail(id: string, lines = 50): string[] {
    if (!this.logs.has(id) && this.jobs.has(id)) this.readJobFile(id);
    return (this.logs.get(id) ?? []).slice(-lines);
  }

  events(id: string): Emitter<JobEvents> {
    let e = this.emitters.get(id);
    if (!e) this.emitters.set(id, (e = new Emitter<JobEvents>()));
    return e;
  }

  /** Seconds until the current job should end (at least 1): the 429's Retry-After. */
  retryAfterSec(): number {
    const j = this.busy;
    if (!j) return 1;
    return Math.max(1, Math.ceil(((j.startedAt ?? j.createdAt) + j.plannedMs - Date.now()) / 1000));
  }

  /**
   * Start a job now or refuse with 429. `run` gets a context whose signal aborts on shutdown;
   * the returned job is already `running`; `finished` settles when it ends.
   */
  start(meta: Pick<Job, 'route' | 'test' | 'target' | 'params' | 'unknownParams' | 'plannedMs' | 'command'>, run: (ctx: RunContext) => Promise<Record<string, unknown>>): { job: Job; finished: Promise<Job> } {
    const busy = this.busy;
    if (busy) {
      throw new ReboundError('RR_ERR_RUNNER_BUSY', `this runner is busy with job ${busy.id} (${busy.route}); one heavy job at a time per shard, retry in ~${this.retryAfterSec()} s or use another shard`, { details: { jobId: busy.id, retryAfterSec: this.retryAfterSec() } });
    }
    this.checkDisk();
    const id = randomBytes(6).toString('hex');
    const now = Date.now();
    // Stored, listed, answered and rendered from here on: a target URL's credentials stay out of it.
    const job: Job = { id, ...redactUrlCredentialsDeep(meta), status: 'running', createdAt: now, startedAt: now, progress: { phase: 'starting' } };
    this.jobs.set(id, job);
    this.logs.set(id, []);
    const abort = new AbortController();
    const ev = this.events(id);
    const log = (raw: string) => {
      // Runner output can carry caller text (labels, stream names, a target's error): never raw
      // controls, and never a target URL's credentials.
      const line = safeText(raw);
      const buf = this.logs.get(id)!;
      buf.push(`${new Date().toISOString()} ${line}`);
      if (buf.length > LOG_KEEP) buf.splice(0, buf.length - LOG_KEEP);
      ev.emit('log', line);
    };
    const ctx: RunContext = {
      signal: abort.signal,
      progress: (p) => {
        job.progress = p;
        ev.emit('update', job);
      },
      log,
    };
    this.persist(job);
    log(`start ${job.route} ${JSON.stringify(job.params)}`);
    // A SIGKILL leaves no chance to write: the record on disk is at most persistMs behind.
    const tick = setInterval(() => {
      try {
        this.persistJob(job);
      } catch {
        // A full or read-only disk: the next tick or the final write tries again.
      }
    }, this.limits.persistMs);
    tick.unref();
    const runP = Promise.resolve().then(() => run(ctx));
    // On abort the runner gets a grace period to close its clients and hand back a partial result.
    const aborted = new Promise<'timeout'>((resolve) => abort.signal.addEventListener('abort', () => setTimeout(() => resolve('timeout'), ABORT_GRACE_MS).unref(), { once: true }));
    const finished = Promise.race([runP, aborted]).then(
      (r) => {
        if (r === 'timeout') {
          markAborted(job);
          job.result = { aborted: true, partial: true, progress: job.progress, note: 'the runner did not return a partial result within the abort grace period; this is its last progress report' };
        } else {
          if (abort.signal.aborted || r.aborted === true) {
            markAborted(job);
            flagAborted(r);
          } else job.status = 'done';
          // The runner's own options carry the URL it connected with (`params.url`), credentials included.
          job.result = redactUrlCredentialsDeep(r);
        }
      },
      (err: unknown) => {
        const e = err as { code?: string; message?: string };
        job.status = 'failed';
        if (abort.signal.aborted) {
          markAborted(job);
          job.result = { aborted: true, partial: true, progress: job.progress };
        }
        job.error = safeText(e?.message ?? String(err));
        job.errorCode = typeof e?.code === 'string' && e.code.startsWith('RR_ERR_') ? e.code : 'RR_ERR_RUN_FAILED';
      },
    ).then(async () => {
      clearInterval(tick);
      job.endedAt = Date.now();
      job.durationMs = job.endedAt - (job.startedAt ?? job.createdAt);
      log(`${job.status}${job.aborted ? ' (aborted)' : ''}${job.error ? `: ${job.error}` : ''} after ${job.durationMs} ms`);
      this.running.delete(id);
      // The HTML report goes next to `<id>.json` for GET /reports/:id; writeJobReport never throws.
      if (job.result && (job.status === 'done' || job.aborted)) log(await writeJobReport(this.resultsDir, job));
      try {
        this.persist(job);
      } catch (err) {
        log(`could not write the result: ${(err as Error).message}`);
      }
      try {
        this.prune();
      } catch (err) {
        log(`retention: ${(err as Error).message}`);
      }
      // Callers get the job with its result; the store keeps only the metadata in memory.
      const snapshot = { ...job };
      ev.emit('end', snapshot);
      this.emitters.delete(id);
      delete job.result;
      return snapshot;
    });
    this.running.set(id, { abort, done: finished.then(() => undefined) });
    return { job, finished };
  }

  /** Abort every running job and wait until each is recorded. */
  async abortAll(): Promise<void> {
    const all = [...this.running.values()];
    for (const r of all) r.abort.abort();
    await Promise.all(all.map((r) => r.done));
  }
}

/** Written beside the file, then renamed over it: a crash mid-write leaves the old file whole. */
function writeAtomic(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

/** A JSON file's value, or undefined when it is missing or not JSON (torn by a crash mid-write). */
export function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

const ABORT_MESSAGE = 'aborted: the runner was stopped (SIGTERM) while this job ran; the partial result is stored';

/**
 * The partial result of an aborted job says so in its own validity, whatever runner made it: a
 * runner that does not raise ABORTED itself gets it here, so no report quotes the partial figures
 * as a finished run's (docs/errors.md).
 */
function flagAborted(result: Record<string, unknown>): void {
  result.aborted = true;
  const v = result.validity as { valid?: unknown; flags?: unknown } | undefined;
  if (!v || typeof v !== 'object' || !Array.isArray(v.flags)) return;
  const flags = v.flags as Record<string, unknown>[];
  if (!flags.some((f) => f.code === 'ABORTED')) flags.push({ code: 'ABORTED', severity: 'fatal', message: 'the run was stopped before its end (the runner was stopped, SIGTERM, while this job ran): figures cover the part that ran and say nothing against the target' });
  v.valid = false;
}

function markAborted(job: Job): void {
  job.status = 'failed';
  job.aborted = true;
  job.error = ABORT_MESSAGE;
  job.errorCode = 'RR_ERR_RUN_ABORTED';
}

/**
 * Records written before the poller-compatible shape (status `aborted`, or `error` as `{code,
 * message}`; a `queued` one died with its process, see load) are rewritten in place; returns whether anything changed.
 */
function normaliseStored(job: Job): boolean {
  const j = job as Omit<Job, 'status' | 'error'> & { status: string; error?: unknown };
  let changed = false;
  if (j.status === 'aborted') {
    markAborted(job);
    changed = true;
  }
  if (j.error && typeof j.error === 'object') {
    const e = j.error as { code?: unknown; message?: unknown };
    job.error = typeof e.message === 'string' ? e.message : JSON.stringify(e);
    if (typeof e.code === 'string') job.errorCode ??= e.code;
    changed = true;
  }
  return changed;
}

/** The job as the API shows it. */
export function jobView(store: JobStore, job: Job, logLines = 50) {
  const result = store.resultOf(job);
  return { ...job, ...(result ? { result } : {}), logTail: store.logTail(job.id, logLines) };
}
