import { kebab, parseOptions, type OptionTable } from '../../lib/options.ts';

export interface ParamDiff {
  name: string;
  asked: string;
  effective: string;
}

const canonicalKey = (table: OptionTable, name: string): string | undefined =>
  Object.keys(table).find((k) => k === name || kebab(k) === name || table[k]!.aliases?.includes(name));

const norm = (v: unknown) => (v === true ? 'true' : v === false ? 'false' : String(v));

/**
 * Params the shard would run differently from what we asked. With the test's option table the
 * asked value is parsed like the shard parses it and compared with the effective value under its
 * canonical name (so `n=20` vs `clients: 20` agree, `seed=01` vs `1` agree); without one, only
 * same-named keys are compared as strings, as the benchmark does.
 */
export function paramMismatches(asked: Record<string, string>, effective: Record<string, unknown>, table: OptionTable | undefined): ParamDiff[] {
  const diffs: ParamDiff[] = [];
  for (const [name, raw] of Object.entries(asked)) {
    const key = table ? canonicalKey(table, name) : undefined;
    let want = raw;
    let eff: unknown = effective[name];
    if (table && key) {
      want = norm(parseOptions({ [key]: table[key]! } as OptionTable, { values: { [key]: raw } })[key]);
      eff = effective[key] ?? effective[name];
      // A runner that echoes the query's strings ('1' for a bool) means the same value.
      if (typeof eff === 'string') {
        try {
          eff = parseOptions({ [key]: table[key]! } as OptionTable, { values: { [key]: eff } })[key];
        } catch {
          // Not parseable as the option: compared as given, so the mismatch is reported.
        }
      }
    }
    if (eff === undefined) continue;
    if (norm(eff) !== norm(want) && !(want === '1' && eff === true) && !(want === '0' && eff === false)) diffs.push({ name, asked: raw, effective: norm(eff) });
  }
  return diffs;
}
