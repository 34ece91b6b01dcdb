import type { OptionSpec } from '../../lib/options.ts';
import { BENCH_TABLE } from './routes.ts';

/**
 * Markdown for docs/runner-api.md's parameter tables, straight from the route table so the docs
 * cannot drift: `npx tsx shards/runner/params-doc.ts`.
 */
const range = (s: OptionSpec) => ('min' in s && s.min !== undefined ? ` (${s.min}..${'max' in s && s.max !== undefined ? s.max : ''})` : '');
const kind = (s: OptionSpec) => (s.type === 'enum' ? s.values.join(' \\| ') : s.type === 'optional-string' ? 'string' : s.type);

export function paramsMarkdown(): string {
  const out: string[] = [];
  for (const e of BENCH_TABLE) {
    out.push(`### ${e.test}: \`POST /bench-${e.test}-{${e.targets.join(',')}}\``, '', e.doc, '', '| parameter | aliases | type | default | meaning |', '|---|---|---|---|---|');
    for (const [k, s] of Object.entries(e.options)) {
      out.push(`| \`${k}\` | ${(s.aliases ?? []).map((a) => `\`${a}\``).join(', ')} | ${kind(s)}${range(s)} | \`${JSON.stringify(s.default) ?? 'unset'}\` | ${s.doc.replace(/\|/g, '\\|')} |`);
    }
    out.push('');
  }
  return out.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(paramsMarkdown());
