import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reportLine } from '../pages/index.ts';
import { jitterModule } from '../../runners/jitter/module.ts';
import { syntheticJitterResult } from '../../runners/jitter/synthetic.ts';
import { writeResults } from './result-files.ts';

const SECRET = 'pw-s3cret';
afterEach(() => {
  delete process.env.RESULTS_DIR;
});

describe('result files and reports of the CLIs', () => {
  it('carry a target URL without its credentials (JSON, CSV, HTML report with its command line)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rr-results-'));
    process.env.RESULTS_DIR = dir;
    const run = syntheticJitterResult({ target: 'ws', clients: 4, msgs: 5, intervalMs: 100, jitterSec: 0.2, offlineMs: 100, replays: true, seed: 3 });
    const result = { ...run, params: { ...run.params, url: `http://user:${SECRET}@127.0.0.1:8080` } };
    const file = await writeResults('creds', result);
    expect(await reportLine(file, result as never, { command: `npm run bench:jitter -- --url http://user:${SECRET}@127.0.0.1:8080` }, [jitterModule])).toBe(`report: ${join(dir, 'creds.html')}\n`);
    const files = readdirSync(dir);
    expect(files.sort()).toEqual(['creds.csv', 'creds.html', 'creds.json']);
    for (const f of files) expect(readFileSync(join(dir, f), 'utf8'), f).not.toContain(SECRET);
    expect(JSON.parse(readFileSync(file, 'utf8')).params.url).toBe('http://***@127.0.0.1:8080');
    expect(readFileSync(join(dir, 'creds.html'), 'utf8')).toContain('--url http://***@127.0.0.1:8080');
    // The caller's own object still holds the URL its clients connect with.
    expect(result.params.url).toContain(SECRET);
  });
});
