import { parseOptions, type OptionTable, type OptionValues } from '../../lib/options.ts';
import type { ScenarioModule } from './types.ts';

const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1);

export interface ScenarioSpec<T extends OptionTable, O extends object> extends Pick<ScenarioModule<O>, 'id' | 'title' | 'run' | 'sections'> {
  /** The suite names each knob `prefix` + its bare name (`s1` + `counts` = `s1Counts`, CLI `--s1-counts`). */
  prefix: string;
  table: T;
  /** What the table cannot say alone (lists, cross-field rules), over values it already validated. */
  typed(v: OptionValues<T>): O;
  plannedSec(o: O): number;
}

/** `s3Rates`, `s3-rates` or `rates` → `rates`: standalone callers may use either the suite's names or the bare ones. */
function bareNames(prefix: string, src: Record<string, unknown>): Record<string, unknown> {
  const bare = (k: string) => (k.startsWith(`${prefix}-`) ? k.slice(prefix.length + 1) : k.startsWith(prefix) && /^[A-Z]/.test(k.slice(prefix.length)) ? k[prefix.length]!.toLowerCase() + k.slice(prefix.length + 1) : k);
  return Object.fromEntries(Object.entries(src).filter(([, v]) => v !== undefined).map(([k, v]) => [bare(k), v]));
}

/**
 * A scenario from its one table: the suite merges `options` into its own table and parses once;
 * `bind` and the standalone `parse` both end in the scenario's `typed`, so a value is checked by
 * one rule wherever it comes from.
 */
export function defineScenario<T extends OptionTable, O extends object>(s: ScenarioSpec<T, O>): ScenarioModule<O> {
  return {
    ...s,
    options: Object.fromEntries(Object.entries(s.table).map(([k, spec]) => [s.prefix + cap(k), spec])),
    parse: (src) => s.typed(parseOptions(s.table, { values: bareNames(s.prefix, src), origin: s.prefix })),
    bind(values) {
      // Already parsed against these same specs under the suite's names: only renamed here.
      const opts = s.typed(Object.fromEntries(Object.keys(s.table).map((k) => [k, values[s.prefix + cap(k)]])) as OptionValues<T>);
      return { id: s.id, title: s.title, opts, plannedSec: s.plannedSec(opts), run: (ctx) => s.run(ctx, opts) };
    },
  };
}
