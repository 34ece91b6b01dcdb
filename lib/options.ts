import { ReboundError } from './errors.ts';

/**
 * One typed option table per runner/service. The CLI, the HTTP query string and env vars all go
 * through `parseOptions`, so a value is validated the same way wherever it comes from, and
 * defaults live only in the table.
 */
type Base<T> = {
  /** Documentation shown by --help and docs/. */
  doc: string;
  default: T;
  /** Env var names that also set this option (the benchmark's names, e.g. NUM_CLIENTS). */
  env?: readonly string[];
  /** Extra CLI / query aliases, e.g. `n` for `clients`. */
  aliases?: readonly string[];
};
export type OptionSpec =
  | (Base<number> & { type: 'int' | 'number'; min?: number; max?: number })
  | (Base<string> & { type: 'string'; pattern?: RegExp; maxLength?: number })
  | (Base<string | undefined> & { type: 'optional-string'; pattern?: RegExp })
  | (Base<string> & { type: 'enum'; values: readonly string[] })
  | (Base<boolean> & { type: 'bool' });

export type OptionTable = Record<string, OptionSpec>;
type ValueOf<S> = S extends { type: 'int' | 'number' }
  ? number
  : S extends { type: 'bool' }
    ? boolean
    : S extends { type: 'optional-string' }
      ? string | undefined
      : S extends { type: 'enum'; values: readonly (infer V)[] }
        ? V
        : string;
export type OptionValues<T extends OptionTable> = { readonly [K in keyof T]: ValueOf<T[K]> };

export function defaultsOf<T extends OptionTable>(table: T): OptionValues<T> {
  const out: Record<string, unknown> = {};
  for (const [k, spec] of Object.entries(table)) out[k] = spec.default;
  return Object.freeze(out) as OptionValues<T>;
}

export const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());

const DECIMAL = /^-?(?:\d+(?:\.\d+)?|\.\d+)$/;
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

function coerce(name: string, spec: OptionSpec, raw: unknown, origin: string): unknown {
  const where = `${origin} option "${name}"`;
  const bad = (why: string) => new ReboundError('RR_ERR_OPTION_INVALID', `${where} ${why} (got ${JSON.stringify(raw)})`, { details: { option: name } });
  switch (spec.type) {
    case 'int':
    case 'number': {
      // Plain decimals only: Number() would take 0x10, ' 1', '1e3' and '' and run something else than typed.
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && DECIMAL.test(raw) ? Number(raw) : NaN;
      if (!Number.isFinite(n)) throw bad(typeof raw === 'string' && raw.trim() !== '' && Number.isFinite(Number(raw)) ? 'must be a plain decimal number (no hex, exponent, sign + or spaces)' : 'must be a number');
      if (spec.type === 'int' && !Number.isInteger(n)) throw bad('must be an integer');
      if (spec.min !== undefined && n < spec.min) throw bad(`must be >= ${spec.min}`);
      if (spec.max !== undefined && n > spec.max) throw bad(`must be <= ${spec.max}`);
      return n;
    }
    case 'bool': {
      if (typeof raw === 'boolean') return raw;
      if (raw === '' || raw === '1' || raw === 'true' || raw === 'yes') return true;
      if (raw === '0' || raw === 'false' || raw === 'no') return false;
      throw bad('must be a boolean (1/0/true/false)');
    }
    case 'enum': {
      if (typeof raw !== 'string' || !spec.values.includes(raw)) throw bad(`must be one of ${spec.values.join(', ')}`);
      return raw;
    }
    case 'string':
    case 'optional-string': {
      if (typeof raw !== 'string') throw bad('must be a string');
      // These values reach log lines, job logs and terminals: a newline or an escape would forge them.
      if (CONTROL.test(raw)) throw bad('must not contain control characters');
      if (spec.pattern && !spec.pattern.test(raw)) throw bad(`must match ${spec.pattern}`);
      if (spec.type === 'string' && spec.maxLength !== undefined && raw.length > spec.maxLength) throw bad(`must be at most ${spec.maxLength} characters`);
      return raw;
    }
  }
}

export interface ParseSources {
  /** Explicit values (CLI flags, query params, JSON body); names may be camelCase, kebab-case or an alias. */
  values?: Record<string, unknown>;
  /** Environment, consulted only for options that declare `env` names. */
  env?: Record<string, string | undefined>;
  /** Where the values came from, for error messages: 'CLI', 'query', 'body'. */
  origin?: string;
  /** Names to accept and ignore (e.g. `async`, `json` handled by the caller). */
  passthrough?: readonly string[];
}

/** Validate and merge: explicit values > env > defaults. Unknown names are an error, not silently dropped. */
export function parseOptions<T extends OptionTable>(table: T, src: ParseSources): OptionValues<T> {
  const origin = src.origin ?? 'option';
  const byName = new Map<string, string>();
  for (const [k, spec] of Object.entries(table)) {
    byName.set(k, k);
    byName.set(kebab(k), k);
    for (const a of spec.aliases ?? []) byName.set(a, k);
  }
  const out: Record<string, unknown> = {};
  for (const [k, spec] of Object.entries(table)) {
    out[k] = spec.default;
    for (const e of spec.env ?? []) {
      const v = src.env?.[e];
      if (v !== undefined && v !== '') {
        out[k] = coerce(e, spec, v, 'env');
        break;
      }
    }
  }
  const givenAs = new Map<string, string>();
  for (const [name, raw] of Object.entries(src.values ?? {})) {
    if (src.passthrough?.includes(name)) continue;
    const key = byName.get(name);
    if (!key) {
      throw new ReboundError('RR_ERR_OPTION_UNKNOWN', `unknown ${origin} option "${name}"; known: ${[...Object.keys(table)].map(kebab).join(', ')}`, { details: { option: name } });
    }
    // `n=5&clients=6`: one of the two would silently win.
    const before = givenAs.get(key);
    if (before !== undefined) throw new ReboundError('RR_ERR_OPTION_INVALID', `${origin} option "${name}" repeats "${before}" (both set ${kebab(key)}): give it once`, { details: { option: name } });
    givenAs.set(key, name);
    out[key] = coerce(name, table[key]!, raw, origin);
  }
  return Object.freeze(out) as OptionValues<T>;
}

/** `--name value`, `--name=value`, bare `--flag` (boolean true). Positional args are rejected. */
export function argvToValues(argv: readonly string[], table: OptionTable): Record<string, unknown> {
  // Null prototype: `--__proto__ x` would otherwise set the prototype (and vanish) and
  // `--constructor x` would read as given twice; both are unknown options like any other name.
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  const boolNames = new Set<string>();
  for (const [k, spec] of Object.entries(table)) {
    if (spec.type === 'bool') {
      boolNames.add(k);
      boolNames.add(kebab(k));
      for (const a of spec.aliases ?? []) boolNames.add(a);
    }
  }
  const known = new Set<string>();
  for (const [k, spec] of Object.entries(table)) for (const n of [k, kebab(k), ...(spec.aliases ?? [])]) known.add(n);
  const set = (name: string, v: unknown) => {
    if (Object.hasOwn(out, name)) throw new ReboundError('RR_ERR_OPTION_INVALID', `option --${name} given twice (${JSON.stringify(String(out[name]))} and ${JSON.stringify(String(v))}): give it once`, { details: { option: name } });
    out[name] = v;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new ReboundError('RR_ERR_OPTION_INVALID', `unexpected argument "${arg}" (options look like --name value)`);
    const eq = arg.indexOf('=');
    if (eq > 0) {
      set(arg.slice(2, eq), arg.slice(eq + 1));
      continue;
    }
    const name = arg.slice(2);
    const next = argv[i + 1];
    // A typo (`--dry-runn`, `--jsn`) is an unknown option, not one that "needs a value" or eats the next flag.
    if (!known.has(name) && (next === undefined || next.startsWith('--'))) {
      throw new ReboundError('RR_ERR_OPTION_UNKNOWN', `unknown option --${name}; known: ${[...Object.keys(table)].map((k) => `--${kebab(k)}`).join(', ')}`, { details: { option: name } });
    }
    if (boolNames.has(name) && (next === undefined || next.startsWith('--') || !['0', '1', 'true', 'false', 'yes', 'no'].includes(next))) {
      set(name, true);
    } else if (next === undefined) {
      throw new ReboundError('RR_ERR_OPTION_INVALID', `option --${name} needs a value`, { details: { option: name } });
    } else {
      set(name, next);
      i++;
    }
  }
  return out;
}

/** `envOnly`: the options are read from env alone (no flag accepts them), so list them by env name. */
export function helpText(table: OptionTable, how: { envOnly?: boolean } = {}): string {
  if (how.envOnly) {
    return Object.entries(table)
      .filter(([, s]) => s.env?.length)
      .map(([, s]) => {
        const vals = s.type === 'enum' ? ` {${s.values.join('|')}}` : '';
        return `    ${s.env![0]!.padEnd(28)} ${s.doc}${vals}; default ${JSON.stringify(s.default)}`;
      })
      .join('\n');
  }
  return Object.entries(table)
    .map(([k, s]) => {
      const env = s.env?.length ? ` [env ${s.env.join(', ')}]` : '';
      const range = 'min' in s || 'max' in s ? ` (${'min' in s && s.min !== undefined ? s.min : ''}..${'max' in s && s.max !== undefined ? s.max : ''})` : '';
      const vals = s.type === 'enum' ? ` {${s.values.join('|')}}` : '';
      return `  --${kebab(k).padEnd(18)} ${s.doc}${vals}${range}; default ${JSON.stringify(s.default)}${env}`;
    })
    .join('\n');
}
