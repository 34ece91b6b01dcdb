import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OptionSpec, OptionTable } from '../lib/options.ts';
import { COORD_OPTIONS, MULTI_TABLE, SHARED_STREAM_TESTS, TEST_TABLES } from '../shards/coordinator/options.ts';
import { createRunnerApp } from '../shards/runner/app.ts';
import { moduleEntry } from '../shards/runner/entry.ts';
import { BENCH_TABLE } from '../shards/runner/routes.ts';
import { resolveTarget } from '../shards/runner/targets.ts';
import { api, tempResultsDir } from '../shards/runner/testing.ts';
import { parseModule, type AnyRunnerModule, type RunnerModule } from '../engine/session/module.ts';
import { jitterModule, type JitterModuleOptions } from './jitter/module.ts';
import { cliOf, moduleHelp } from '../cli/module-cli.ts';
import { RUNNER_MODULES } from './modules.ts';
import { HTTP_MODULES, MULTI_MODULES } from '../shards/runner/adapters/index.ts';
import { jitterAdapter } from '../shards/runner/adapters/jitter.ts';

/**
 * The CLI, the HTTP route and the coordinator's row of every runner come from its one module: the
 * same option table, the same validator (same error text), the same planned duration.
 */
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
const errorOf = (fn: () => unknown): { code?: string; message: string } | undefined => {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err as { code?: string; message: string };
  }
};
/** A value each kind of option refuses in lib/options.ts's coerce (the same rule wherever it comes from). */
const badValue = (s: OptionSpec): string => (s.type === 'int' || s.type === 'number' ? 'x' : s.type === 'bool' ? 'maybe' : s.type === 'enum' ? '__nope__' : 'a\u0001b');
const local = (route: string) => resolveTarget(route, {});
/** The route target a module's HTTP entry is tried on (a local one; capacity needs a target with a service). */
const routeOf = (m: (typeof HTTP_MODULES)[number]) => (m.http!.targets.includes('ws') ? 'ws' : m.http!.targets[0]!);
/** CLI values for a run on that target: the route names it, the CLI says it with --target or --targets. */
const cliTarget = (m: AnyRunnerModule, route: string) => ('targets' in m.options ? { targets: route } : { target: route });

describe('runner modules: one table for CLI, HTTP and coordinator', () => {
  it('every module has a name of its own, a 5-line cli.ts calling the driver with it, and its npm script', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    expect(new Set(RUNNER_MODULES.map((m) => m.name)).size).toBe(RUNNER_MODULES.length);
    for (const m of RUNNER_MODULES) {
      const script = pkg.scripts[`bench:${cliOf(m).script}`];
      expect(script, m.name).toMatch(/^tsx cli\/[\w-]+\.ts$/);
      const cli = readFileSync(new URL(`../${script!.slice(4)}`, import.meta.url), 'utf8');
      expect(cli, m.name).toMatch(/runModuleCli\(\w+Module\);/);
      expect(cli.trim().split('\n').length, m.name).toBeLessThanOrEqual(5);
    }
  });

  it('the route table is the modules with an HTTP entry, each with its table, targets and doc', () => {
    expect(BENCH_TABLE.map((e) => e.test)).toEqual(HTTP_MODULES.map((m) => m.name));
    for (const m of HTTP_MODULES) {
      const e = BENCH_TABLE.find((x) => x.test === m.name)!;
      expect(e.options).toBe(m.http!.options);
      expect(e.targets).toBe(m.http!.targets);
      expect(e.doc).toBe(m.doc);
    }
  });

  it("the coordinator's table is the fan-out modules: same option tables, shared-stream and merge fields from the module", () => {
    expect(MULTI_TABLE.map((r) => r.test)).toEqual(MULTI_MODULES.map((m) => m.name));
    expect((COORD_OPTIONS.test as { values: readonly string[] }).values).toEqual(MULTI_MODULES.map((m) => m.name));
    for (const m of MULTI_MODULES) {
      const row = MULTI_TABLE.find((r) => r.test === m.name)!;
      expect(row.options).toBe(m.http!.options);
      expect(TEST_TABLES[m.name]).toBe(m.http!.options);
      expect(row.required).toBe(m.summary);
      expect(SHARED_STREAM_TESTS.includes(m.name)).toBe(m.multi!.sharedStream);
    }
    expect(SHARED_STREAM_TESTS).toEqual(['jitter', 'latency']);
  });

  it.each(RUNNER_MODULES.map((m) => [m.name, m] as const))('%s: --help lists every option of its table with its doc', (_n, m) => {
    const help = moduleHelp(m);
    for (const [k, s] of Object.entries(m.options as OptionTable)) {
      expect(help, k).toContain(`--${kebab(k)}`);
      expect(help, k).toContain(s.doc);
    }
    expect(help).toContain('--json');
  });

  it.each(HTTP_MODULES.map((m) => [m.name, m] as const))('%s: a bad value gets the same error over HTTP as on the CLI (every option both take)', (_n, m) => {
    const entry = moduleEntry(m);
    let compared = 0;
    for (const [k, spec] of Object.entries(m.http!.options as OptionTable)) {
      if (!(k in m.options)) continue;
      const raw = badValue(spec);
      const cli = errorOf(() => parseModule(m, { values: { [k]: raw }, origin: 'CLI' }));
      const http = errorOf(() => entry.parse({ [k]: raw }));
      expect(cli, `${k}=${JSON.stringify(raw)}`).toBeDefined();
      expect(http?.code, k).toBe(cli!.code);
      expect(http!.message.replace(/^query option/, 'CLI option'), k).toBe(cli!.message);
      compared++;
    }
    expect(compared).toBeGreaterThan(0);
  });

  it.each(HTTP_MODULES.map((m) => [m.name, m] as const))('%s: the HTTP entry plans with the module\'s plannedMs, as the CLI does', (_n, m) => {
    const route = routeOf(m);
    const values: Record<string, string> = 'ramp' in m.http!.options ? { ramp: '50' } : {};
    const prepared = moduleEntry(m).prepare(values, local(route));
    const cli = parseModule(m, { values: { ...values, ...cliTarget(m, route) }, origin: 'CLI' });
    expect(prepared.plannedMs).toBe(m.plannedMs(cli));
    expect(prepared.plannedMs).toBeGreaterThan(0);
    // Validated by the module's own rules: what runs is what the CLI would run.
    expect(m.plannedMs(prepared.opts)).toBe(prepared.plannedMs);
  });

  it.each([
    ['jitter', { subscribeOnly: '1' }, /subscribe-only needs the shared stream's name/],
    ['jitter', { n: '3', workers: '4' }, /workers \(4\) exceeds clients \(3\)/],
    ['whispers', { n: '4', rooms: '5' }, /rooms \(5\) exceeds clients \(4\)/],
    ['deploy-impact', { publisherDownMs: '5000', publishAfterMs: '4000' }, /must be shorter than publish-after-ms/],
    ['throughput', { n: '18000', total: '1000000' }, /exceeds \d+ ledger cells/],
  ] as const)('%s %j: the cross-field rule is the same validator on both sides', (test, values, why) => {
    const m = HTTP_MODULES.find((x) => x.name === test)!;
    const http = errorOf(() => moduleEntry(m).prepare(values, local('ws')));
    const cli = errorOf(() => parseModule(m, { values: { ...values, target: 'ws' }, origin: 'CLI' }));
    expect(http?.message).toMatch(why);
    expect(http?.message).toBe(cli?.message);
  });
});

describe('an option added to a module reaches --help, the route and the CLI with one validation', () => {
  // jitter with one more option: what a runner author does to add a knob.
  const extra = { probeMs: { type: 'int', default: 100, min: 10, max: 1000, doc: 'a knob added to the table' } } as const satisfies OptionTable;
  const probe: RunnerModule<JitterModuleOptions & { probeMs: number }, object> = {
    ...jitterModule,
    name: 'probe',
    options: { ...jitterModule.options, ...extra },
    validate: (v) => ({ ...jitterModule.validate(v as Parameters<typeof jitterModule.validate>[0]), probeMs: v.probeMs as number }),
    plannedMs: (o) => jitterModule.plannedMs(o) + o.probeMs,
  };
  const entry = moduleEntry<JitterModuleOptions & { probeMs: number }, object, OptionTable, OptionTable>(probe, { ...jitterAdapter, targets: ['ws'], options: { ...jitterAdapter.options, ...extra } });
  let server: ReturnType<ReturnType<typeof createRunnerApp>['app']['listen']>;
  let base = '';
  beforeAll(async () => {
    const { app } = createRunnerApp({ token: 'modules-token-0123456789abcdef', resultsDir: tempResultsDir(), table: [entry], env: {} });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server?.close(r)));

  it('listed by --help, refused over HTTP with the CLI\'s words, planned by the same function', async () => {
    expect(moduleHelp(probe)).toMatch(/--probe-ms\s+a knob added to the table \(10\.\.1000\); default 100/);
    const cli = errorOf(() => parseModule(probe, { values: { probeMs: '5', target: 'ws' }, origin: 'CLI' }));
    expect(cli?.message).toBe('CLI option "probeMs" must be >= 10 (got "5")');
    const r = await api(base, '/bench-probe-ws?probeMs=5', { method: 'POST', token: 'modules-token-0123456789abcdef' });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'RR_ERR_OPTION_INVALID', details: { option: 'probeMs' }, message: 'query option "probeMs" must be >= 10 (got "5")' });
    const p = entry.prepare({ probeMs: '700', n: '2' }, local('ws'));
    expect(p.opts.probeMs).toBe(700);
    expect(p.effectiveParams).toMatchObject({ clients: 2 });
    expect(p.plannedMs).toBe(probe.plannedMs(parseModule(probe, { values: { probeMs: '700', n: '2', target: 'ws' }, origin: 'CLI' })));
    expect(p.plannedMs - jitterModule.plannedMs(p.opts)).toBe(700);
  });
});

describe('a generated CLI as a user runs it', () => {
  it('bench:throughput --help lists its table; a bad flag exits 2 with the coded error', () => {
    const run = (args: string[]) => spawnSync(process.execPath, ['--import', 'tsx', 'cli/throughput.ts', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    const help = run(['--help']);
    expect(help.status).toBe(0);
    const m = RUNNER_MODULES.find((x) => x.name === 'throughput')!;
    for (const k of Object.keys(m.options)) expect(help.stdout).toContain(`--${kebab(k)}`);
    const bad = run(['--publisher-concurrency', '0']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('error RR_ERR_OPTION_INVALID: CLI option "publisher-concurrency" must be >= 1 (got "0")');
  });
});
