import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliToExit as runCli } from '../../cli/testing.ts';
import { jsonWsServer } from './servers.ts';

/**
 * A target file whose lean protocol throws, held by the idle runner's worker processes and by
 * capacity S1: the faults travel from the workers to the result, and the run ends with
 * TARGET_MODULE_FAULT naming the file instead of blaming the server for the failed connects.
 */
let server: Awaited<ReturnType<typeof jsonWsServer>>;
beforeAll(async () => void (server = await jsonWsServer()));
afterAll(() => server.close());

const file = join(mkdtempSync(join(tmpdir(), 'rebound-lean-faults-')), 'json-ws-lean-broken.ts');
writeFileSync(
  file,
  `import base from ${JSON.stringify(resolve('examples/targets/json-ws.ts'))};
import { defineTarget, LeanClient, LeanStage, type ClientOptions } from ${JSON.stringify(resolve('target.ts'))};
const { reconnect: _r, replays: _p, ...d } = base;
let n = 0;
// Every third connection's opener throws: the others subscribe, so the run is not empty.
export default defineTarget({ ...d, name: 'json-ws-lean-broken', createLeanClient: (opts: ClientOptions) => new LeanClient(opts, { url: (b) => b.replace(/^http/, 'ws').replace(/\\/+$/, '') + '/live', onOpen: (room) => { if (n++ % 3 === 0) throw new Error('bad opener'); return [JSON.stringify({ op: 'join', room })]; }, onMessage: (p) => (JSON.parse(p.toString()).op === 'joined' ? { stage: LeanStage.Subscribed } : undefined) }) });
`,
);

type Flags = { valid: boolean; flags: { code: string; message: string }[] };

describe("a target file's lean protocol that throws, in worker processes", () => {
  it('idle: the workers report the faults; TARGET_MODULE_FAULT names the file and the hook', async () => {
    const r = await runCli('cli/idle.ts', ['--target-module', file, '--url', server.url, '--clients', '30', '--workers', '2', '--hold', '1', '--ramp', '300', '--json']);
    expect(r.stdout, r.stderr).toMatch(/^\{/);
    const res = JSON.parse(r.stdout) as { subscribed: number; failed: number; targetModule: { file: string; faults: { hook: string; count: number }[] }; validity: Flags };
    expect(res.subscribed).toBe(20);
    expect(res.failed).toBe(10);
    expect(res.targetModule.file).toBe(file);
    expect(res.targetModule.faults).toEqual([expect.objectContaining({ hook: 'lean onOpen()', count: 10 })]);
    expect(res.validity.valid).toBe(false);
    const flag = res.validity.flags.find((f) => f.code === 'TARGET_MODULE_FAULT');
    expect(flag?.message).toContain(file);
    expect(flag?.message).toContain('lean onOpen()');
  });

  it('capacity S1: the idle run\'s TARGET_MODULE_FAULT reaches the scenario\'s flags', async () => {
    const r = await runCli('cli/capacity.ts', ['--target-module', file, '--url', server.url, '--scenarios', 'S1', '--s1-counts', '30', '--s1-ramps', '200', '--s1-runs', '1', '--s1-hold', '1', '--s1-warmup', '0', '--json']);
    expect(r.stdout, r.stderr).toMatch(/^\{/);
    const s1 = (JSON.parse(r.stdout) as { results: { scenario: string; validity: Flags }[] }).results[0]!;
    expect(s1.scenario).toBe('S1');
    const flag = s1.validity.flags.find((f) => f.code === 'TARGET_MODULE_FAULT');
    expect(flag?.message).toContain(file);
    expect(flag?.message).toContain('lean onOpen()');
  });

  it("capacity S3: the loaders report the faults; the step's TARGET_MODULE_FAULT names the file and the hook", async () => {
    const rig = ['--s3-step-sec', '1.5', '--s3-warmup-sec', '0', '--s3-loaders', '1', '--s3-max-loader-lag-ms', '5000', '--s3-max-p99-ms', '10000', '--s3-max-publisher-late-ms', '10000', '--s3-min-machine-idle-pct', '0'];
    const r = await runCli('cli/capacity.ts', ['--target-module', file, '--url', server.url, '--scenarios', 'S3', '--s3-connections', '21', '--s3-streams', '3', '--s3-rates', '30', ...rig, '--json']);
    expect(r.stdout, r.stderr.slice(-2000)).toMatch(/^\{/);
    const s3 = (JSON.parse(r.stdout) as { results: { scenario: string; validity: Flags }[] }).results[0]!;
    expect(s3.scenario).toBe('S3');
    expect(s3.validity.valid).toBe(false);
    const flag = s3.validity.flags.find((f) => f.code === 'TARGET_MODULE_FAULT');
    expect(flag?.message).toContain(file);
    expect(flag?.message).toContain('lean onOpen() x7');
  }, 120_000);
});
