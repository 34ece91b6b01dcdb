import { currentCommit } from '../../engine/measure/summary.ts';
import { defineModule } from '../../engine/session/module.ts';
import { SICK_REDIS_OPTIONS, type Scenario, type SickRedisRunOptions } from './options.ts';
import { runScenario, scenarioPlannedMs, type SickRedisResult } from './run.ts';

/** The scenarios one after the other in one run, a log line per goal (the CLI: cli/presenters/sick-redis.ts). */
export const sickRedisModule = defineModule({
  name: 'sick-redis',
  doc: 'a real redis-server under replay nodes stalled (SIGSTOP), killed and restarted (AOF or empty), or a node flooded, while official clients listen; one goal line per check',
  options: SICK_REDIS_OPTIONS,
  // The table's pattern admits only known names: the list needs no other rule.
  validate: (v): SickRedisRunOptions => ({ ...v, scenarios: v.scenarios.split(',') as Scenario[] }),
  plannedMs: (o) => o.scenarios.reduce((ms, s) => ms + scenarioPlannedMs(s, o), 0),
  target: 'self',
  targetOf: () => ({ name: 'sick-redis' }),
  async run(o, ctx) {
    // A bounded run (`timeout 600 ...`) ends with SIGTERM: exit so the reaper kills redis-server,
    // the nodes and the client processes instead of leaving them behind (a scenario does not stop midway).
    ctx.signal.addEventListener('abort', () => process.exit(130), { once: true });
    // The tree measured is read before the run, so a commit made meanwhile is not named instead.
    const run = { commit: currentCommit(), measuredAt: new Date().toISOString(), results: [] as SickRedisResult[] };
    for (const s of o.scenarios) {
      const r = await runScenario(s, o, ctx.log);
      for (const g of r.goals) ctx.log(`${s}: ${g.met ? 'met ' : 'MISS'} ${g.goal}: ${JSON.stringify(g.measured)}`);
      for (const f of r.validity?.flags ?? []) ctx.log(`${s}: ${f.severity} ${f.code}: ${f.message}`);
      run.results.push(r);
    }
    return run;
  },
});

/** The run: every scenario's result, and the tree measured. */
export type SickRedisRun = Awaited<ReturnType<typeof sickRedisModule.run>>;
