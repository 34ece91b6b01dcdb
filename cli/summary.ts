import { readFileSync, writeFileSync } from 'node:fs';
import { currentCommit, summarize } from '../engine/measure/summary.ts';

/**
 * Package a benchmark's `--json` output as a committed figure file:
 * `<bench> --json | node --import tsx cli/summary.ts <out.json> "<command>"`.
 * Accepts one JSON document, an array, or JSON lines.
 */
const [out, command] = process.argv.slice(2);
if (!out || !command) {
  process.stderr.write('usage: summary-cli.ts <out.json> "<command>" < bench.json\n');
  process.exit(2);
}
// The commit is read now, when the pipe starts with the benchmark, not when its output ends: a
// run takes minutes, and a commit made meanwhile is not the code that ran.
const commit = currentCommit();
const text = readFileSync(0, 'utf8').trim();
let parsed: unknown;
try {
  parsed = JSON.parse(text);
} catch {
  parsed = text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as unknown);
}
const results = (Array.isArray(parsed) ? parsed : [parsed]) as Record<string, unknown>[];
if (results.length === 0) {
  process.stderr.write('no JSON on stdin\n');
  process.exit(1);
}
writeFileSync(out, JSON.stringify(summarize(results, command, commit), null, 2) + '\n');
process.stderr.write(`wrote ${out}\n`);
