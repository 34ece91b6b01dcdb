import { kebab, type OptionTable } from '../../lib/options.ts';

const SECRET = /key|secret|token|password/i;
const shellQuote = (v: string) => (/^[\w@%+=:,./-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`);

/**
 * The npm command that reproduces a run: every option that differs from its default, plus the
 * seed always (a run's seed is what makes its timeline repeatable). Secrets are redacted.
 */
export function commandLine(script: string, table: OptionTable, values: Record<string, unknown>, seed?: number): string {
  const args: string[] = [];
  for (const [name, spec] of Object.entries(table)) {
    if (name === 'seed') continue;
    const v = values[name];
    if (v === undefined || v === spec.default || v === '') continue;
    args.push(`--${kebab(name)}`, SECRET.test(name) ? '<redacted>' : shellQuote(String(v)));
  }
  const s = seed ?? values.seed;
  if (typeof s === 'number' && s > 0) args.push('--seed', String(s));
  return `npm run ${script}${args.length ? ' -- ' + args.join(' ') : ''}`;
}
