import { join } from 'node:path';
import type { OptionTable } from '../../lib/options.ts';
import { reportLine } from '../../engine/pages/index.ts';
import { RUNNER_MODULES } from '../../runners/modules.ts';
import type { Job } from './jobs.ts';

const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The curl line that reruns a job: its route with the effective params under the route's own
 * option names (one name per option, so the shard never sees an option twice). The token is
 * never written: the line reads it from $BENCH_RUNNER_TOKEN, the shard's address from $RUNNER_URL.
 */
export function curlLine(route: string, table: OptionTable, params: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [name, spec] of Object.entries(table)) {
    const key = [name, ...(spec.aliases ?? [])].find((k) => params[k] !== undefined && params[k] !== null);
    const v = key === undefined ? undefined : params[key];
    if (v === undefined || v === null || v === '' || typeof v === 'object') continue;
    q.set(name, String(v));
  }
  const qs = q.toString();
  return `curl -sS -X POST -H "Authorization: Bearer $BENCH_RUNNER_TOKEN" "\${RUNNER_URL:-http://127.0.0.1:3001}"${shq(route + (qs ? `?${qs}` : ''))}`;
}

/**
 * `<RESULTS_DIR>/<id>.html` next to `<id>.json`, for `GET /reports/:id`. Returns the log line;
 * a result without a report builder (or a bare abort note) is logged, never fails the job.
 */
export async function writeJobReport(resultsDir: string, job: Job): Promise<string> {
  if (!job.result || typeof job.result.test !== 'string') return 'report: not written (the result names no test)';
  return (await reportLine(join(resultsDir, `${job.id}.json`), job.result as { test: string }, { command: job.command ?? '' }, RUNNER_MODULES)).trimEnd();
}
