import { readFileSync } from 'node:fs';
import { runCli } from '../lib/cli.ts';
import { ReboundError } from '../lib/errors.ts';

/**
 * `npx tsx cli/avalanche-summary.ts results/<file>.json [...] > docs/results/<name>.json`:
 * the summary committed beside figures in docs/. Everything but the encoded histograms (base64
 * blobs, reproducible from the run) and the runner's parameters echo is kept; several files are
 * concatenated into one array.
 */
const DROP = new Set(['latencyHistogram', 'histogram']);

function strip(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(strip);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).filter(([k]) => !DROP.has(k)).map(([k, x]) => [k, strip(x)]));
  return v;
}

async function main(argv: string[]): Promise<number> {
  if (!argv.length) throw new ReboundError('RR_ERR_OPTION_INVALID', 'usage: summary-cli.ts <results.json> [...]');
  const all = argv.flatMap((f) => {
    const parsed = JSON.parse(readFileSync(f, 'utf8')) as unknown;
    return Array.isArray(parsed) ? parsed : [parsed];
  });
  process.stdout.write(JSON.stringify(strip(all), null, 1) + '\n');
  return 0;
}

runCli(main);
