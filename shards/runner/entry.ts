import { parseOptions, type OptionTable, type OptionValues } from '../../lib/options.ts';
import { withDefaults, type ModuleRunContext, type RunnerModule } from '../../engine/session/module.ts';
import { shownOptions, type HttpAdapter } from './adapters/adapter.ts';
import { httpAdapterOf } from './adapters/index.ts';
import { redactBroadcastKey } from './adapters/route-target.ts';
import { defined } from './params.ts';
import { annotateRun, withResolvedTarget } from './targets.ts';
import type { BenchEntry, JobProgress } from './types.ts';

/**
 * The one HTTP entry, built from a runner's module and its adapter (its own, or the default one):
 * the query is parsed once with the adapter's table, mapped onto the module's options with the
 * route's target, validated by the same `validate` the CLI uses, and planned by the same
 * `plannedMs`. Phases, progress and log lines go
 * to the job (the presentation subscriber of the runner service).
 */
export function moduleEntry<O extends object, R extends object, T extends OptionTable, Q extends OptionTable>(m: RunnerModule<O, R, T>, http: HttpAdapter<O, R, Q> | undefined = httpAdapterOf(m)): BenchEntry<O> {
  if (!http) throw new Error(`runner "${m.name}" has no HTTP entry`);
  const entry: BenchEntry<O> = {
    test: m.name,
    targets: http.targets,
    options: http.options,
    doc: m.doc,
    parse: (values) => parseOptions(http.options, { values, origin: 'query' }),
    build(q, t, given) {
      const { values, echo = {}, post = {} } = http.fromQuery(q as OptionValues<Q>, t, given);
      const opts = m.validate(withDefaults(m.options, values));
      return {
        opts,
        post,
        effectiveParams: defined({ ...(http.shown ? http.shown(opts) : shownOptions(opts)), target: t.route, targetSource: t.source, ...echo }),
        plannedMs: m.plannedMs(opts),
      };
    },
    prepare: (values, t) => entry.build(entry.parse(values), t, values),
    run(opts, t, job, post = {}) {
      let last: JobProgress = { phase: 'connect' };
      const ctx: ModuleRunContext = {
        signal: job.signal,
        phase: (name, detail) => {
          job.log(`${name}: ${detail}`);
          job.progress((last = { ...last, phase: name }));
        },
        progress: (p) => job.progress((last = { ...p, phase: p.phase ?? last.phase })),
        log: job.log,
      };
      const finish = (r: R) => (http.finish ? http.finish(r, post, t) : redactBroadcastKey(r));
      if (m.target === 'self') return annotateRun(t, async () => finish(await m.run(opts, ctx)));
      return withResolvedTarget(t, async (url, svc, nodes) => finish(await m.run(opts, { ...ctx, url, definition: t.definition, ...(svc ? { service: svc } : {}), ...(nodes ? { nodes } : {}) })), m.serviceArgs?.(opts));
    },
  };
  return entry;
}
