import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { throughputModule } from '../runners/throughput/module.ts';
import { RUNNER_MODULES } from '../runners/modules.ts';
import { cliOf, moduleHelp } from './module-cli.ts';
import { CLI_PRESENTERS } from './presenters/index.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const node = (script: string, args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });

describe('cli/main.ts <test>: any runner module from the module list', () => {
  it('answers as the runner\'s own npm script does (same --help, same coded error for a bad flag)', () => {
    const viaMain = node('cli/main.ts', ['throughput', '--help']);
    expect(viaMain.status).toBe(0);
    expect(viaMain.stdout).toBe(node('cli/throughput.ts', ['--help']).stdout);
    expect(viaMain.stdout).toBe(moduleHelp(throughputModule));
    const bad = node('cli/main.ts', ['throughput', '--publisher-concurrency', '0']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('error RR_ERR_OPTION_INVALID: CLI option "publisher-concurrency" must be >= 1 (got "0")');
  });

  it('refuses an unknown test with a coded error naming the known ones, and no test with its usage', () => {
    const unknown = node('cli/main.ts', ['nope', '--json']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/^error RR_ERR_OPTION_INVALID: .*"test".*nope/);
    for (const m of RUNNER_MODULES) expect(unknown.stderr).toContain(m.name);
    const none = node('cli/main.ts', []);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/^usage: cli\/main\.ts <jitter\|/);
  });
});

describe('CLI presentation defaults', () => {
  it('a module with no presenter gets every hook it needs: script, usage, JSON on --json, file name, Reproduce values', () => {
    const bare = { ...throughputModule, name: 'bare' };
    const cli = cliOf(bare);
    expect(cli).toMatchObject({ script: 'bare', usage: '[options] [--json]', json: 'flag' });
    const opts = { target: 'ws', clients: 3 } as unknown as Parameters<typeof cli.fileName>[0];
    expect(cli.fileName(opts, {} as never)).toMatch(/^bare-ws-\d/);
    expect(cli.command(opts, {} as never)).toEqual({ values: opts });
    expect(moduleHelp(bare)).toMatch(/^usage: npm run bench:bare -- \[options\] \[--json\]\n/);
  });

  it('each presenter belongs to one module of the list (a presenter for a module that is not run is dead code)', () => {
    const names = CLI_PRESENTERS.map((p) => p.module.name);
    expect(new Set(names).size).toBe(names.length);
    for (const p of CLI_PRESENTERS) expect(RUNNER_MODULES).toContain(p.module);
  });
});
