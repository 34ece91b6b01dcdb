import { loadavg } from 'node:os';
import { toErrorBody } from '../../lib/errors.ts';
import { LOOP_LAG_WARN_MS, verdict } from '../../engine/measure/validity.ts';
import type { IdleResult } from '../idle/result.ts';
import { isTargetStartError } from './target.ts';
import type { ScenarioContext, ScenarioId, ScenarioResult, ScenarioValidityFlag } from './types.ts';

/** What every capacity figure on this machine leaves out. */
export const SHARED_MACHINE_NOTE = "loader and server share this machine's two cores: the loader's CPU is taken from the server's, so every figure is a floor for the server alone";

/** A result with no steps yet: scenarios fill in steps, headline, failure mode and validity. */
export function emptyResult(ctx: ScenarioContext, scenario: ScenarioId, title: string, params: Record<string, unknown>, headline: ScenarioResult['headline']): ScenarioResult {
  return { scenario, title, target: ctx.target.name, startedAt: new Date().toISOString(), params: { ...params, loadavgAtStart: loadavg().map((x) => Math.round(x * 100) / 100) }, steps: [], headline, validity: { valid: true, flags: [] }, notShown: [SHARED_MACHINE_NOTE] };
}

export function finishValidity(r: ScenarioResult): ScenarioResult {
  const seen = new Set<string>();
  r.validity.flags = r.validity.flags.filter((f) => (seen.has(f.code + f.message) ? false : (seen.add(f.code + f.message), true)));
  r.validity.valid = verdict(r.validity.flags).valid;
  return r;
}

/** The idle runner's own validity, carried into the scenario (runner fd/ports fatal, loop lag a warning). */
export function idleFlags(res: IdleResult | null, where: string): ScenarioValidityFlag[] {
  if (!res) return [];
  const out: ScenarioValidityFlag[] = res.validity.flags.filter((f) => f.code !== 'CONNECT_FAILURES' && f.code !== 'NOTHING_CONNECTED').map((f) => ({ code: f.code, severity: f.severity, message: `${where}: ${f.message}` }));
  if (res.runner.loopLagP99Ms > LOOP_LAG_WARN_MS && !out.some((f) => f.code === 'RUNNER_LOOP_LAG')) out.push({ code: 'RUNNER_LOOP_LAG', severity: 'warning', message: `${where}: runner loop lag p99 ${res.runner.loopLagP99Ms} ms` });
  return out;
}

/**
 * What ended a scenario early by an error, as its failure mode and fatal flag: a local target that
 * did not start says so (`target start: ...`, TARGET_START), anything else is the scenario's own
 * error (SCENARIO_ERROR). `where` prefixes the flag (`S2 400`).
 */
export function errorOutcome(err: unknown, where?: string): { failureMode: string; flag: ScenarioValidityFlag } {
  const e = toErrorBody(err);
  const at = where ? `${where}: ` : '';
  if (isTargetStartError(err)) return { failureMode: e.message, flag: { code: 'TARGET_START', severity: 'fatal', message: `${at}${e.code}: ${e.message}` } };
  return { failureMode: `error: ${e.code}: ${e.message}`, flag: { code: 'SCENARIO_ERROR', severity: 'fatal', message: `${at}${e.code}: ${e.message}` } };
}
