import { kebab, parseOptions, type OptionTable } from '../lib/options.ts';
import { registerTargetModules, TARGET_MODULE_OPTIONS } from '../engine/targets/user-module.ts';

const FLAG = `--${kebab('targetModule')}`;

/**
 * `--target-module ./my-target.ts` (or TARGET_MODULE) on a runner CLI: the file is loaded and
 * checked before anything runs (a bad file exits 2 with its coded error), its target is resolvable
 * by name in this process and its workers (registerTargetModules), and it becomes the target when the command names none. `fn` gets
 * argv without the flag. Without the flag, `fn(argv)` as it was.
 */
export async function withTargetModule<T>(argv: readonly string[], env: Record<string, string | undefined>, table: OptionTable, fn: (argv: string[]) => Promise<T>): Promise<T> {
  const rest: string[] = [];
  let given: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === FLAG) given = argv[++i] ?? '';
    else if (a.startsWith(`${FLAG}=`)) given = a.slice(FLAG.length + 1);
    else rest.push(a);
  }
  const { targetModule } = parseOptions(TARGET_MODULE_OPTIONS, { values: given === undefined ? {} : { targetModule: given }, env, origin: 'CLI' });
  if (targetModule === undefined) return fn(rest);
  const [def] = await registerTargetModules([targetModule]);
  // The runner's target option (`target`, capacity's `targets`) defaults to the module's target.
  const key = ['target', 'targets'].find((k) => k in table);
  const spec = key ? table[key] : undefined;
  const named = key !== undefined && (rest.some((a) => a === `--${kebab(key)}` || a.startsWith(`--${kebab(key)}=`)) || (spec?.env ?? []).some((e) => env[e]));
  if (key && !named) rest.push(`--${kebab(key)}`, def!.name);
  return fn(rest);
}
