import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { redactUrlCredentialsDeep } from '../../lib/redact.ts';

/** Where results go: RESULTS_DIR or ./results. */
export const resultsDir = () => resolve(process.env.RESULTS_DIR ?? 'results');

/** Flatten nested objects into dotted keys for CSV (arrays and encoded histograms are left out). */
function flatten(obj: Record<string, unknown>, prefix = '', out: Record<string, string | number | boolean | null> = {}) {
  for (const [k, v] of Object.entries(obj)) {
    const key = prefix ? `${prefix}.${k}` : k;
    if (v === null || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') out[key] = v;
    else if (typeof v === 'object' && !Array.isArray(v) && k !== 'latencyHistogram' && k !== 'chaos') flatten(v as Record<string, unknown>, key, out);
  }
  return out;
}

const csvCell = (v: unknown) => {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

function toCsv(rows: Record<string, unknown>[]): string {
  const flat = rows.map((r) => flatten(r));
  const cols = [...new Set(flat.flatMap((r) => Object.keys(r)))];
  return [cols.join(','), ...flat.map((r) => cols.map((c) => csvCell(r[c])).join(','))].join('\n') + '\n';
}

/** Write `<name>.json` (full results) and `<name>.csv` (one row per result). Returns the JSON path. */
export async function writeResults(name: string, results: Record<string, unknown>[] | Record<string, unknown>): Promise<string> {
  const dir = resultsDir();
  await mkdir(dir, { recursive: true });
  // A target URL's credentials are for the connection, never for the files (lib/redact.ts).
  results = redactUrlCredentialsDeep(results);
  const rows = Array.isArray(results) ? results : [results];
  const base = join(dir, name);
  await writeFile(base + '.json', JSON.stringify(results, null, 2) + '\n');
  await writeFile(base + '.csv', toCsv(rows));
  return base + '.json';
}

export const stamp = (d = new Date()) => d.toISOString().replace(/[:.]/g, '-');
