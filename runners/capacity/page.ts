import type { ReportMeta, ReportModel, Section, Verdict } from '../../engine/pages/types.ts';
import { bannerFlags, reportHead } from '../../engine/pages/validity.ts';
import type { CapacityRun } from './run.ts';
import { scenarioById } from './scenarios/index.ts';
import { notShownLines, summaryRows } from './table.ts';
import type { ScenarioId } from './types.ts';

/**
 * The capacity suite's report page: the side-by-side summary, then each scenario's own sections
 * (its module's `sections()`, in scenario order), then what the figures do not show.
 */
export function capacityReport(runs: readonly CapacityRun[], meta: ReportMeta): ReportModel {
  const run = runs[0]!;
  const sections: Section[] = [];
  for (const id of run.scenarios) {
    const results = run.results.filter((r) => r.scenario === id);
    if (results.length) sections.push(...scenarioById(id as ScenarioId).sections(results));
  }
  sections.push({ title: 'What these figures do not show', intro: notShownLines(run).join(' · '), charts: [] });
  const verdicts: Verdict[] = run.targets.map((t) => {
    const mine = run.results.filter((r) => r.target === t);
    const invalid = mine.filter((r) => !r.validity.valid);
    const stopped = mine.filter((r) => r.steps.some((s) => !s.pass));
    return {
      target: t,
      level: invalid.length ? 'lost' : stopped.length ? 'late' : 'good',
      words: invalid.length ? 'Some figures are not valid' : stopped.length ? 'Reached a limit' : 'Every step held',
      detail: mine.map((r) => `${r.scenario}: ${r.headline.value ?? 'n/a'} ${r.headline.unit}${r.failureMode && r.failureMode !== 'none' ? ` (${r.failureMode.split(':')[0]})` : ''}`).join('; '),
    };
  });
  return {
    title: `Capacity: ${run.targets.join(' vs ')}`,
    subtitle: `${run.scenarios.join(', ')}; started ${run.startedAt}; load average ${run.machine.loadavgAtStart.join(', ')} on ${run.machine.cpus} CPUs${run.aborted ? ' (aborted)' : ''}`,
    ...reportHead(meta, run.seed, run.results.flatMap((r) => bannerFlags(`${r.target} ${r.scenario}`, r.validity.flags))),
    verdicts,
    summary: summaryRows(run),
    sections,
  };
}
