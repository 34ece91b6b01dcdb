import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ERROR_CODES, ReboundError, toErrorBody, type ErrorCode } from '../../lib/errors.ts';
import { redactUrlCredentialsDeep } from '../../lib/redact.ts';
import { openFileLimit } from '../../engine/measure/runner-limits.ts';
import { sendError } from '../../services/common/http-app.ts';
import { requireToken } from './auth.ts';
import { follow } from './follow.ts';
import { JOB_ID, JobStore, jobView, type Job } from './jobs.ts';
import type { JobStoreLimits } from './options.ts';
import { echoCallerNames, parseBenchQuery } from './params.ts';
import { benchRoutes, BENCH_TABLE } from './routes.ts';
import { curlLine } from './report.ts';
import { registerTimeRoute } from './time-route.ts';
import { withClockDrift } from './clock-drift.ts';
import { checkResolved, envName, resolveTarget } from './targets.ts';
import { getTarget } from '../../engine/targets/index.ts';
import type { BenchEntry, RunContext } from './types.ts';

export interface RunnerAppOptions {
  token: string;
  resultsDir: string;
  table?: readonly BenchEntry[];
  env?: Record<string, string | undefined>;
  /** Source addresses the runners deal clients over (engine/measure/addresses.ts). */
  sourceAddresses?: number;
  /** Retention, disk floor and persistence interval of the job store. */
  limits?: Partial<JobStoreLimits>;
}

const intParam = (v: unknown, dflt: number, min: number, max: number, name: string): number => {
  if (v === undefined) return dflt;
  const n = typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
  if (!Number.isInteger(n)) throw new ReboundError('RR_ERR_OPTION_INVALID', `query option "${name}" must be an integer (got ${JSON.stringify(v)})`, { details: { option: name } });
  // Documented as min..max: outside it is a 400 naming the option, not a silent clamp.
  if (n < min || n > max) throw new ReboundError('RR_ERR_OPTION_INVALID', `query option "${name}" must be ${min}..${max} (got ${JSON.stringify(v)})`, { details: { option: name } });
  return n;
};

/** A job's failure as the one error shape, with the job id. */
function jobError(job: Job): ReboundError {
  const code = (job.errorCode && job.errorCode in ERROR_CODES ? job.errorCode : 'RR_ERR_RUN_FAILED') as ErrorCode;
  return new ReboundError(code, job.aborted ? `job ${job.id} aborted: the runner is shutting down (partial result stored)` : (job.error ?? 'run failed'), { details: { jobId: job.id, status: job.status, ...(job.aborted ? { aborted: true } : {}) } });
}

/**
 * The bench-runner HTTP service: bearer auth, one route per (test, target) from the route table,
 * sync or async jobs, stored results. Every answer about a run echoes `effectiveParams` and
 * `unknownParams` (always empty: an unknown name is a 400, never a warning).
 */
export function createRunnerApp(opts: RunnerAppOptions) {
  const env = opts.env ?? process.env;
  const store = new JobStore(opts.resultsDir, opts.limits);
  const table = opts.table ?? BENCH_TABLE;
  const routes = benchRoutes(table);
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  // `/JOBS` or `/jobs/` are not `/jobs`: one spelling per route, so the open list stays exact.
  app.set('case sensitive routing', true);
  app.set('strict routing', true);
  app.use(requireToken(opts.token));

  app.get('/health', (_req, res) => {
    const busy = store.busy;
    res.json({
      status: 'ok',
      mode: 'bench-runner',
      service: 'rebound-runner',
      state: busy ? 'busy' : 'idle',
      busy: Boolean(busy),
      ...(busy ? { job: { id: busy.id, route: busy.route, progress: busy.progress } } : {}),
      authRequired: Boolean(opts.token),
      resultsDisk: { freeBytes: store.freeBytes() ?? null, minFreeBytes: store.limits.minFreeBytes },
      fdLimit: openFileLimit() ?? null,
      sourceAddresses: { first: '127.0.0.1', last: `127.0.0.${opts.sourceAddresses ?? 200}`, count: opts.sourceAddresses ?? 200 },
      node: process.version,
      pid: process.pid,
      uptimeSec: Math.round(process.uptime()),
      // A local target that cannot run here (uws without its binary) says so, with the reason.
      targets: Object.fromEntries([...new Set(routes.map((r) => r.target))].map((t) => [t, env[`TARGET_${envName(t)}_URL`] ? 'configured' : localState(t)])),
      routes: routes.map((r) => `POST ${r.path}`),
    });
  });

  for (const route of routes) {
    app.post(route.path, async (req: Request, res: Response) => {
      try {
        const q = parseBenchQuery(route.entry.options, req.query as Record<string, unknown>);
        // The query's one parse: every value checked (400 naming the field) before the target is resolved.
        const parsed = route.entry.parse(q.values);
        const target = resolveTarget(route.target, env, q.targetUrls);
        const prepared = route.entry.build(parsed, target, q.values);
        const prep = { ...prepared, effectiveParams: echoCallerNames(route.entry.options, q.values, prepared.effectiveParams) };
        const run = async (ctx: RunContext) => {
          // DNS rebinding: what the request's host names resolve to, against the env they were resolved with.
          await checkResolved(target, env);
          return route.entry.run(prep.opts, target, ctx, prep.post);
        };
        const started = store.start({ route: route.path, test: route.entry.test, target: route.target, params: prep.effectiveParams, unknownParams: [], plannedMs: prep.plannedMs, command: curlLine(route.path, route.entry.options, prep.effectiveParams) }, (ctx) => withClockDrift(() => run(ctx)));
        const { job } = started;
        // The job's copy: redacted as it was stored (a target URL's credentials never echo back).
        const echo = { effectiveParams: job.params, unknownParams: [] as string[] };
        if (q.async) return void res.status(202).location(`/jobs/${job.id}`).json({ jobId: job.id, status: job.status, ...echo });
        // Sync: the answer comes when the run ends, possibly many minutes later.
        req.socket.setKeepAlive(true, 15_000);
        req.socket.setTimeout(0);
        const done = await started.finished;
        if (done.status === 'done') return void res.json({ ...done.result, jobId: done.id, ...echo });
        const body = toErrorBody(jobError(done));
        res.status(body.statusCode).json({ ...body, ...echo, ...(done.result ? { result: done.result } : {}) });
      } catch (err) {
        const e = err as ReboundError;
        if (e?.code === 'RR_ERR_RUNNER_BUSY') res.set('Retry-After', String(store.retryAfterSec()));
        // Refusals echo too: nothing ran (effectiveParams null) and which names were unknown.
        const body = redactUrlCredentialsDeep(toErrorBody(err));
        if (!res.headersSent) res.status(body.statusCode).json({ ...body, effectiveParams: null, unknownParams: (e?.details?.unknownParams as string[] | undefined) ?? [] });
      }
    });
  }

  // A refusal thrown by these handlers reaches the error handler below (sendError), as Express 5 forwards it.
  app.get('/jobs', (req, res) => {
    const limit = intParam(req.query.limit, 50, 1, 500, 'limit');
    res.json({ jobs: store.list(limit).map(({ result: _r, ...j }) => ({ ...j, hasResult: Boolean(j.hasResult) })) });
  });

  app.get('/jobs/:id', (req, res) => {
    const job = store.get(req.params.id);
    if (!job) throw new ReboundError('RR_ERR_JOB_NOT_FOUND', `job ${JSON.stringify(req.params.id)} not found`, { details: { jobId: req.params.id } });
    const logLines = intParam(req.query.logLines, 50, 1, 500, 'logLines');
    const f = req.query.follow;
    if (f !== undefined && f !== '0') return follow(req, res, store, job, logLines);
    res.json(jobView(store, job, logLines));
  });

  const stored = (kind: 'results' | 'reports', ext: string, type: string) => (req: Request, res: Response) => {
    const id = String(req.params.id);
    const file = join(opts.resultsDir, `${id}.${ext}`);
    if (!JOB_ID.test(id) || !existsSync(file)) {
      return sendError(res, new ReboundError('RR_ERR_JOB_NOT_FOUND', `no stored ${kind === 'results' ? 'result' : 'HTML report'} for ${JSON.stringify(id)}`, { details: { jobId: id } }));
    }
    res.type(type).send(readFileSync(file));
  };
  registerTimeRoute(app);
  app.get('/results/:id', stored('results', 'json', 'application/json'));
  app.get('/reports/:id', stored('reports', 'html', 'text/html'));

  app.use((req: Request, res: Response) => sendError(res, new ReboundError('RR_ERR_NOT_FOUND', `no route ${req.method} ${req.path}; see GET /health for the routes`)));
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => sendError(res, err));
  return { app, store };
}

/** `local`, or why the target's local service cannot run on this runner. */
function localState(target: string): string {
  const reason = getTarget(target).unavailable?.();
  if (reason) return `not installed here: ${reason}`;
  // A target with no local service (pusher, a target file's) runs only once its URL is configured: resolveTarget says so.
  try {
    resolveTarget(target, {});
    return 'local';
  } catch (err) {
    if ((err as { code?: unknown }).code === 'RR_ERR_TARGET_NOT_CONFIGURED') return `not configured: set TARGET_${envName(target)}_URL`;
    throw err;
  }
}
