import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BENCH_TABLE } from './routes.ts';
import { paramsMarkdown } from './params-doc.ts';

describe('docs/runner-api.md', () => {
  const doc = readFileSync(new URL('../../docs/runner-api.md', import.meta.url), 'utf8');
  it('lists every route and every parameter of the route table, as generated', () => {
    expect(doc).toContain(paramsMarkdown());
    for (const e of BENCH_TABLE) {
      expect(doc).toContain(`/bench-${e.test}-`);
      for (const k of Object.keys(e.options)) expect(doc, `${e.test}.${k}`).toContain(`| \`${k}\` |`);
    }
  });
});
