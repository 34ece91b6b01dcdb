import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { comparisonRows } from './jitter/table.ts';
import type { JitterResult } from './jitter/result.ts';

/**
 * Every figure in docs/performance.md must be reproducible from the tree: the summary JSON it
 * cites is committed under docs/results/, parses, and names the commit and command it was
 * measured with, and the doc names that commit too.
 */
const DOC = 'docs/performance.md';
const doc = readFileSync(DOC, 'utf8');
// A runner's own results folder in a command (`RESULTS_DIR=results/s1`) is where it writes, not a figure cited.
const refs = [...doc.matchAll(/(?<!RESULTS_DIR=)(?:[\w./-]*\/)?results\/[\w.*-]+/g)].map((m) => m[0]);

describe(`${DOC} figure files`, () => {
  it('cites figure files, all under docs/results/ and none by wildcard', () => {
    expect(refs.filter((r) => r.endsWith('.json')).length).toBeGreaterThan(0);
    for (const r of refs) expect(r, r).toMatch(/^docs\/results\/[\w.-]+\.(json|sh)$/);
    for (const r of refs) expect(existsSync(r), r).toBe(true);
  });

  it.each([...new Set(refs.filter((r) => r.endsWith('.json')))])('%s exists, parses and names its commit and command', (ref) => {
    expect(existsSync(ref), ref).toBe(true);
    const j = JSON.parse(readFileSync(ref, 'utf8')) as { commit?: unknown; command?: unknown; measuredAt?: unknown; results?: unknown };
    expect(typeof j.commit, `${ref}: commit`).toBe('string');
    expect(j.commit).toMatch(/^[0-9a-f]{7,40}$/); // a clean tree: no "-dirty"
    expect(typeof j.command, `${ref}: command`).toBe('string');
    expect(Number.isNaN(Date.parse(String(j.measuredAt))), `${ref}: measuredAt`).toBe(false);
    expect(Array.isArray(j.results), `${ref}: results`).toBe(true);
    expect(doc, `${DOC} names ${ref}'s commit`).toContain(String(j.commit));
  });
});

/** Markdown tables whose header's first cell is empty are jitter comparison tables (report.ts). */
function comparisonTables(): { at: number; rows: string[][] }[] {
  const lines = doc.split('\n');
  const cells = (l: string) => l.trim().replace(/^\||\|$/g, '').split('|').map((c) => c.trim());
  const out: { at: number; rows: string[][] }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!/^\|\s+\|/.test(lines[i]!) || !/^\|[-|\s]+\|$/.test(lines[i + 1] ?? '')) continue;
    const rows = [cells(lines[i]!)];
    let j = i + 2;
    for (; j < lines.length && lines[j]!.startsWith('|'); j++) rows.push(cells(lines[j]!));
    out.push({ at: doc.split('\n').slice(0, i).join('\n').length, rows });
    i = j;
  }
  return out;
}

describe(`${DOC} comparison tables`, () => {
  const tables = comparisonTables();

  it('exist', () => expect(tables.length).toBeGreaterThan(0));

  it.each(tables.map((t, n) => [n, t] as const))('table %i is what the report prints from the file cited before it', (_n, t) => {
    const before = [...doc.slice(0, t.at).matchAll(/docs\/results\/[\w.-]+\.json/g)].pop();
    expect(before, 'a docs/results/ file cited before the table').toBeDefined();
    const { results } = JSON.parse(readFileSync(before![0], 'utf8')) as { results: JitterResult[] };
    const printed = comparisonRows(results);
    expect(t.rows[0]).toEqual(printed[0]);
    // A table may show a subset of the rows, but each row exactly as printed now (label and figures).
    for (const row of t.rows.slice(1)) expect(printed, `row "${row[0]}"`).toContainEqual(row);
  });
});
