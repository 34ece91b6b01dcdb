import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readJson } from '../runner/jobs.ts';
import type { Execution } from './execute.ts';
import type { TestSpec } from './schema.ts';
import type { MetricVerdict, TestVerdict } from './verdict.ts';

/**
 * What one test's rebaseline run leaves on disk (results/<id>.json and results/runs/<run>/<id>.json):
 * the test's id, runner, target and params, and how it went.
 */
export interface RunRecord extends Pick<TestSpec, 'id' | 'runner' | 'target' | 'params'> {
  /** The run's directory name under runs/: its id, also written into baselines by --update. */
  runId: string;
  runAt: string;
  commit: string | null;
  where: string;
  repeat: number;
  valid: boolean;
  verdict: TestVerdict;
  errors: string[];
  metrics: MetricVerdict[];
  /** Each execution's own result (full JSON: histograms included, so verdicts can be recomputed). */
  executions: Execution[];
}

export function writeRun(outDir: string, rec: RunRecord): string {
  const dir = join(outDir, 'runs', rec.runId);
  mkdirSync(dir, { recursive: true });
  const body = JSON.stringify(rec, null, 2) + '\n';
  const archived = join(dir, `${rec.id}.json`);
  writeFileSync(join(outDir, `${rec.id}.json`), body);
  writeFileSync(archived, body);
  return archived;
}

/** Every stored run: its directory name and its records by test id. */
export type History = readonly { runId: string; records: Map<string, RunRecord> }[];

/** Stored runs, oldest first; each run directory maps test id → record. Unreadable files are skipped. */
export function readHistory(outDir: string): History {
  const root = join(outDir, 'runs');
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .sort()
    .map((runId) => {
      const records = new Map<string, RunRecord>();
      for (const f of readdirSync(join(root, runId)).filter((x) => x.endsWith('.json'))) {
        // A half-written file from an interrupted run (no value here) is not history.
        const r = readJson<RunRecord | null>(join(root, runId, f));
        if (r && typeof r.id === 'string' && Array.isArray(r.metrics)) records.set(r.id, r);
      }
      return { runId, records };
    })
    .filter((r) => r.records.size > 0);
}
