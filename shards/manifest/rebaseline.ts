import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { stamp } from '../../engine/measure/result-files.ts';
import { execute, type Where } from './execute.ts';
import type { RebaselineOptions } from './options.ts';
import { loadManifest, selectTests, skippedTests, DEFAULT_DRIFT_PCT, type Manifest, type TestSpec } from './schema.ts';
import { writeRun, type RunRecord } from './store.ts';
import { getPath, judgeOne, judgeRepeat, median, pastHard, worstOf } from './verdict.ts';

const commit = () => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
};

/** Judge a test's executions against its baselines (pure: the stored results can be re-judged). */
export function judge(spec: TestSpec, executions: RunRecord['executions']): Pick<RunRecord, 'valid' | 'verdict' | 'errors' | 'metrics'> {
  const errors = executions.filter((e) => e.error).map((e) => `${e.ref}: ${e.error}`);
  const invalid = executions.filter((e) => e.result && !e.valid);
  for (const e of invalid) {
    const flags = ((e.result!.validity as { flags?: { code: string; severity: string; message: string }[] } | undefined)?.flags ?? []).filter((f) => f.severity === 'fatal');
    errors.push(`${e.ref}: invalid run: ${flags.map((f) => `${f.code} (${f.message})`).join('; ') || 'validity.valid is false'}`);
  }
  const good = executions.filter((e) => e.result && e.valid && !e.error);
  const drift = spec.driftThresholdPct ?? DEFAULT_DRIFT_PCT;
  const metrics = Object.entries(spec.baseline).map(([path, b]) => {
    const values = good.map((e) => getPath(e.result, path));
    // One run against a baseline of several stored runs is judged on their spread too: a single
    // noisy walk must not go red where the baseline's own runs disagree by as much.
    return values.length > 1 || (b.samples?.length ?? 0) >= 2 ? judgeRepeat(path, b, values, drift) : judgeOne(path, b, values[0], drift);
  });
  // An invalid or failed run is never a pass, whatever its numbers say.
  const base = worstOf(metrics.map((m) => m.verdict));
  const verdict = good.length === 0 && executions.some((e) => !e.result) ? 'failed' : invalid.length || good.length < executions.length ? worstOf(['invalid', base]) : base;
  return { valid: invalid.length === 0 && errors.length === 0, verdict, errors, metrics };
}

/** 2 when any test was invalid or failed, 1 on any regress, else 0 (drift alone passes). */
export function exitCodeOf(recs: readonly Pick<RunRecord, 'verdict'>[]): 0 | 1 | 2 {
  if (recs.some((r) => r.verdict === 'invalid' || r.verdict === 'failed')) return 2;
  if (recs.some((r) => r.verdict === 'regress')) return 1;
  return 0;
}

export function describePlan(tests: readonly TestSpec[], where: string, skipped: readonly { id: string; why: string }[] = []): string {
  const run = tests.map((t) => `${t.id}  ${t.runner} on ${t.target} (${where})  ${Object.entries(t.params).map(([k, v]) => `${k}=${v}`).join(' ')}  judged on ${Object.keys(t.baseline).join(', ')}`).join('\n');
  const skip = skipped.map((s) => `skipped ${s.id}: ${s.why}`).join('\n');
  return `${run}\n${tests.length} tests${skipped.length ? `\n${skip}\n${skipped.length} skipped` : ''}\n`;
}

/** Walk the manifest: run each selected test (K times), judge it, store it; optionally write new baselines. */
export async function rebaseline(o: RebaselineOptions, env: Record<string, string | undefined>, log: (l: string) => void) {
  const file = resolve(o.manifest);
  const manifest = loadManifest(file);
  const tests = selectTests(manifest, o);
  // Held back by the idle/avalanche gates, with why.
  const skipped = skippedTests(manifest, o);
  const runId = stamp();
  const where = o.shards ? `shards ${o.shards}` : o.runnerUrl ? `runner ${o.runnerUrl}` : 'local';
  const records: RunRecord[] = [];
  if (o.dryRun) return { tests, skipped, records, runId, where, exitCode: 0 as const };
  const w: Where = { ...(o.shards ? { shards: o.shards } : {}), ...(o.runnerUrl ? { runnerUrl: o.runnerUrl } : {}), token: o.token || undefined, pollMs: o.pollMs, timeoutSec: o.timeoutSec, env, log };
  const sha = commit();
  for (const spec of tests) {
    const executions: RunRecord['executions'] = [];
    for (let k = 0; k < o.repeat; k++) {
      log(`[${spec.id}] run ${k + 1}/${o.repeat} (${where})`);
      const e = await execute(spec, w);
      executions.push({ ref: o.repeat > 1 ? `${e.ref}#${k + 1}` : e.ref, valid: e.valid, ...(e.error ? { error: e.error } : {}), result: e.result });
    }
    const rec: RunRecord = { id: spec.id, runId, runAt: new Date().toISOString(), commit: sha, where, runner: spec.runner, target: spec.target, params: spec.params, repeat: o.repeat, ...judge(spec, executions), executions };
    const archived = writeRun(resolve(o.outputDir), rec);
    log(`[${spec.id}] ${rec.verdict}; stored ${archived}`);
    records.push(rec);
  }
  if (o.update) {
    for (const b of refusedUpdates(manifest, records)) log(`[${b.id}] baselines NOT updated: ${b.reason}`);
    writeFileSync(file, JSON.stringify(updateBaselines(manifest, records), null, 2) + '\n');
  }
  return { tests, skipped, records, runId, where, exitCode: exitCodeOf(records) };
}

/**
 * Tests whose run may not become their baseline: a measured value past the metric's own hard
 * threshold (a broken server's 0% delivery) would make the broken state the norm, and every later
 * run that matched it would be judged against a baseline that is itself a regress.
 */
export function refusedUpdates(m: Manifest, recs: readonly RunRecord[]): { id: string; reason: string }[] {
  const out: { id: string; reason: string }[] = [];
  for (const r of recs) {
    const t = m.tests.find((x) => x.id === r.id);
    if (!t || !r.valid) continue;
    const past = Object.entries(t.baseline).flatMap(([path, b]) => {
      const v = r.executions.map((e) => getPath(e.result, path)).find((x): x is number => typeof x === 'number' && pastHard(b, x));
      return v === undefined ? [] : [`${path} ${v} is past its hard threshold ${b.hardThreshold}`];
    });
    if (past.length) out.push({ id: r.id, reason: `${past.join('; ')}: fix the cause (or change the threshold in the manifest) before making this the baseline` });
  }
  return out;
}

/** New baselines from valid runs only: each judged path's median, its runs, and the run id they came from. */
export function updateBaselines(m: Manifest, recs: readonly RunRecord[]): Manifest {
  const byId = new Map(recs.map((r) => [r.id, r]));
  const refused = new Set(refusedUpdates(m, recs).map((x) => x.id));
  return {
    ...m,
    tests: m.tests.map((t) => {
      const r = byId.get(t.id);
      if (!r || !r.valid || refused.has(t.id)) return t;
      const baseline = Object.fromEntries(
        Object.entries(t.baseline).map(([path, b]) => {
          const vals = r.executions.map((e) => getPath(e.result, path));
          if (vals.length && vals.every((v): v is number => typeof v === 'number')) {
            return [path, { ...b, value: Math.round(median(vals) * 1000) / 1000, samples: vals, runIds: [r.runId], updatedAt: r.runAt }];
          }
          if (vals.length && typeof vals[0] === 'string') return [path, { ...b, value: vals[0], runIds: [r.runId], updatedAt: r.runAt }];
          return [path, b];
        }),
      );
      return { ...t, baseline };
    }),
  };
}
