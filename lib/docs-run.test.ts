import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startService } from '../services/common/spawn.ts';
import { startRunner } from '../shards/runner/testing.ts';
import { readDocBlocks } from './doc-blocks.ts';
import { DOC_TESTS, freePorts, runShellBlock } from './doc-tests.ts';

/**
 * The docs' doc-test blocks run for real (issue 35): each block's own text, with only the scale
 * substitutions lib/doc-tests.ts declares for it and free ports, on loopback; a non-zero exit of
 * any command fails it. lib/docs.test.ts checks every block is marked.
 */

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const BLOCKS = readDocBlocks(ROOT);

describe('docs: doc-test blocks run', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rr-docs-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));
  for (const [id, spec] of Object.entries(DOC_TESTS)) {
    it(
      id,
      async () => {
        const block = BLOCKS.find((b) => b.marker?.kind === 'doc-test' && b.marker.value === id);
        expect(block, `no block marked doc-test: ${id}`).toBeDefined();
        let text = block!.text;
        for (const [from, to] of spec.subs) {
          expect(typeof from === 'string' ? text.includes(from) : from.test(text), `${block!.file}:${block!.line}: substitution ${String(from)} no longer matches the block`).toBe(true);
          if (from instanceof RegExp) from.lastIndex = 0;
          text = typeof from === 'string' ? text.split(from).join(to) : text.replace(from, to);
        }
        const dir = mkdtempSync(join(tmp, `${id}-`));
        // The block's relative RESULTS_DIR (and the default) and the files it writes land in this test's temp dir, not the checkout.
        text = text.replace(/RESULTS_DIR=results/g, `RESULTS_DIR=${dir}/results`).replace(/> (?!\/|&)(\S+)/g, `> ${dir}/$1`);
        const token = 'doc-test-token';
        const replay = spec.services ? await startService('replay') : undefined;
        const runner = spec.services ? await startRunner({ BENCH_RUNNER_TOKEN: token, RESULTS_DIR: join(dir, 'runner'), TARGET_URL_ALLOW: '127.0.0.1:*' }) : undefined;
        try {
          text = replay && runner ? text.replaceAll('{REPLAY}', `127.0.0.1:${replay.port}`).replaceAll('{RUNNER}', runner.url).replaceAll('{TOKEN}', token) : await freePorts(text);
          const r = await runShellBlock(text, dir, spec.timeoutMs - 10_000);
          if (process.env.DOCS_TEST_DUMP) writeFileSync(join(process.env.DOCS_TEST_DUMP, `${id}.out`), `${r.script}\n----\n${r.output}`);
          const why = `${block!.file}:${block!.line} exited ${r.code}; script:\n${r.script}\noutput:\n${r.output.slice(-6000)}`;
          expect(r.code, why).toBe(0);
          // Commands that exit 0 whatever the answer (curl without -f): what their output must hold.
          for (const [re, min] of spec.outputs ?? []) expect(r.output.match(re)?.length ?? 0, `${String(re)} in the output; ${why}`).toBeGreaterThanOrEqual(min);
        } finally {
          await runner?.stop();
          await replay?.stop();
        }
      },
      spec.timeoutMs,
    );
  }
});

