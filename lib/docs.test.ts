import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseModule } from '../engine/session/module.ts';
import { RUNNER_MODULES } from '../runners/modules.ts';
import { cliOf } from '../cli/module-cli.ts';
import { COORD_OPTIONS, TEST_TABLES } from '../shards/coordinator/options.ts';
import { reapOnExit } from './reaper.ts';
import { docFiles, logicalLines, npmRunCalls, readDocBlocks, type DocBlock } from './doc-blocks.ts';
import { DOC_TESTS } from './doc-tests.ts';
import { TARGET_MODULE_OPTIONS } from '../engine/targets/user-module.ts';
import { argvToValues, kebab, type OptionTable } from './options.ts';

/**
 * Docs that run (issue 35): every command block of README.md and docs/**.md is marked (lib/doc-blocks.ts
 * says which fences count and how), and every `npm run` line in any of them names a real script with
 * flags its CLI accepts. The `doc-test` blocks run for real in lib/docs-run.test.ts.
 */

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
const DOC_FILES = docFiles(ROOT);
const BLOCKS: DocBlock[] = readDocBlocks(ROOT);
const COMMAND_BLOCKS = BLOCKS.filter((b) => b.command);
const where = (b: DocBlock) => `${b.file}:${b.line}`;

/** A word that stands for a value the reader fills in (`<port>`, `[--json]`, `...`, `$T`): its line's flags are checked by name only. */
const PLACEHOLDER = /[<>[\]$]|\.\.\./;

describe('docs: command blocks', () => {
  it('finds the docs and their command blocks', () => {
    expect(DOC_FILES).toContain('README.md');
    expect(COMMAND_BLOCKS.length).toBeGreaterThan(50);
  });

  it('every command block is marked doc-test (with a known id) or illustrative (with a reason)', () => {
    const bad = COMMAND_BLOCKS.filter((b) => !b.marker || (b.marker.kind === 'doc-test' ? !DOC_TESTS[b.marker.value] : b.marker.value.length < 10));
    expect(bad.map((b) => `${where(b)}: ${b.marker ? `${b.marker.kind}: ${b.marker.value}` : 'no <!-- doc-test: id --> or <!-- illustrative: reason --> line before the fence'}`)).toEqual([]);
    // Every doc-test id runs exactly one block: a renamed marker or a deleted block fails here.
    const ids = COMMAND_BLOCKS.filter((b) => b.marker?.kind === 'doc-test').map((b) => b.marker!.value);
    expect(ids.sort()).toEqual(Object.keys(DOC_TESTS).sort());
  });

  it('every `npm run` line names a script of package.json and only flags its CLI accepts', async () => {
    const problems: string[] = [];
    const helpCache = new Map<string, Promise<Set<string>>>();
    // Start every `--help` the check will need at once (bounded), then walk the lines in order.
    for (const b of COMMAND_BLOCKS)
      for (const line of logicalLines(b.text))
        for (const call of npmRunCalls(line)) {
          const m = RUNNER_MODULES.find((x) => `bench:${cliOf(x).script}` === call.script);
          if (PKG.scripts[call.script] && !m && !coordinatorNames(call.script, call.args) && call.args.length && !call.args.includes('--help')) helpNames(helpCache, call.script, call.args).catch(() => {});
        }
    for (const b of COMMAND_BLOCKS) {
      for (const line of logicalLines(b.text)) {
        for (const call of npmRunCalls(line)) {
          const at = `${where(b)} \`${line.slice(0, 100)}\``;
          if (!PKG.scripts[call.script]) {
            problems.push(`${at}: no script "${call.script}" in package.json`);
            continue;
          }
          const args = call.args.filter((a) => a !== '--json');
          if (args.includes('--help') || args.length === 0) continue;
          const m = RUNNER_MODULES.find((x) => `bench:${cliOf(x).script}` === call.script);
          // A --target-module line names its target by a file the docs cannot load here: its flags are checked by name.
          if (m && !args.some((a) => PLACEHOLDER.test(a)) && !args.includes('--target-module')) {
            // The CLI's own validator, in process: names, aliases, types, ranges and the module's cross-checks.
            try {
              parseModule(m, { values: argvToValues(args, m.options), env: call.env, origin: 'CLI' });
            } catch (err) {
              problems.push(`${at}: ${(err as Error).message}`);
            }
            continue;
          }
          const known = m ? moduleNames(m.options) : (coordinatorNames(call.script, args) ?? (await helpNames(helpCache, call.script, args)));
          for (const a of args) {
            const name = /^--([a-z0-9][a-z0-9-]*)/i.exec(a)?.[1];
            if (name && !known.has(name)) problems.push(`${at}: --${name} is not an option of ${call.script} (its option table, or its --help)`);
          }
        }
      }
    }
    expect(problems).toEqual([]);
  }, 180_000);
});

function moduleNames(table: OptionTable): Set<string> {
  // Every runner CLI also takes --target-module (cli/target-module.ts), declared once in its own table.
  return new Set(['json', 'help', ...Object.entries({ ...table, ...(TARGET_MODULE_OPTIONS as OptionTable) }).flatMap(([k, s]) => [k, kebab(k), ...(s.aliases ?? [])])]);
}

/** The coordinator's names (its own table and the test's, aliases included), or undefined for another script. */
function coordinatorNames(script: string, args: string[]): Set<string> | undefined {
  const cmd = PKG.scripts[script] ?? '';
  if (!cmd.includes('shards/coordinator/main.ts')) return undefined;
  const test = /--test (\S+)/.exec(`${cmd} ${args.join(' ')}`)?.[1] ?? String(COORD_OPTIONS.test.default);
  return moduleNames({ ...(TEST_TABLES[test] ?? {}), ...COORD_OPTIONS });
}

/** At most 4 `--help` processes at once: each is an npm + tsx start. */
const helpSlots = {
  free: 4,
  waiting: [] as (() => void)[],
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.free === 0) await new Promise<void>((r) => this.waiting.push(r));
    else this.free--;
    try {
      return await fn();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  },
};

/** The flag names a CLI's `--help` lists (with `--test X` kept: the coordinator lists that test's params). */
function helpNames(cache: Map<string, Promise<Set<string>>>, script: string, args: string[]): Promise<Set<string>> {
  const t = args.indexOf('--test');
  const extra = t >= 0 && args[t + 1] ? ['--test', args[t + 1]!] : [];
  const key = [script, ...extra].join(' ');
  let p = cache.get(key);
  if (!p) {
    p = helpSlots.run(() => new Promise<Set<string>>((resolve, reject) => {
      // The script's own command without npm in between (an npm start per CLI is seconds on a busy machine).
      const cmd = /^(?:exec )?(?:node --import tsx|tsx) (\S+\.ts)((?: --?\S+)*)$/.exec(PKG.scripts[script]!);
      const argv = cmd ? ['--import', 'tsx', cmd[1]!, ...cmd[2]!.split(' ').filter(Boolean), ...extra, '--help'] : null;
      const child = argv ? spawn(process.execPath, argv, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] }) : spawn('npm', ['run', '-s', script, '--', ...extra, '--help'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
      reapOnExit(child);
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.once('exit', (code) => {
        const names = new Set([...out.matchAll(/--([a-z0-9][a-z0-9-]*)/gi)].map((m) => m[1]!));
        if (code !== 0 || names.size === 0) reject(new Error(`npm run ${key} -- --help exited ${code}: ${out.slice(-500)}`));
        else resolve(names);
      });
    }));
    cache.set(key, p);
  }
  return p;
}

