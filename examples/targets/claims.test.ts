import { runCliToExit as runCli } from '../../cli/testing.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jsonWsServer } from './servers.ts';

/**
 * A target file that claims a capability it does not have (issue 37): copies of the json-ws
 * example that lie about one capability each, run by the real jitter CLI against the example's
 * server, end with TARGET_MODULE_FAULT naming the file and the capability, never the server.
 */
let server: Awaited<ReturnType<typeof jsonWsServer>>;
beforeAll(async () => void (server = await jsonWsServer()));
afterAll(() => server.close());

const dir = mkdtempSync(join(tmpdir(), 'rebound-claims-'));
const example = resolve('examples/targets/json-ws.ts');
const contract = resolve('target.ts');

/** The example under another name, `capabilities` overridden, `createClient` optionally wrapped. */
function lie(name: string, caps: string, wrap = ''): string {
  const file = join(dir, `${name}.ts`);
  writeFileSync(
    file,
    `import base from ${JSON.stringify(example)};
import { defineTarget, type ClientOptions } from ${JSON.stringify(contract)};
const { reconnect: _r, replays: _p, ...d } = base;
export default defineTarget({ ...d, name: ${JSON.stringify(name)}, capabilities: { ...base.capabilities, ${caps} }${wrap ? `, createClient: (opts: ClientOptions) => { const c = base.createClient(opts); ${wrap}; return c; }` : ''} });
`,
  );
  return file;
}

async function jitter(file: string) {
  const r = await runCli('cli/jitter.ts', ['--target-module', file, '--url', server.url, '--clients', '10', '--msgs', '40', '--interval', '150', '--jitter', '1', '--jitter-ms', '300', '--settle', '2000', '--seed', '11', '--json']);
  expect(r.stdout, r.stderr).toMatch(/^\{/);
  return JSON.parse(r.stdout) as { reconnects: number; targetModule: { file: string; faults: { hook: string; count: number }[] }; validity: { valid: boolean; flags: { code: string; message: string }[] } };
}

describe('a target file that claims a capability it does not have', () => {
  it.each([
    ['offsets', 'offsets: true', '', 'capabilities.offsets'],
    ['epochs', 'epochs: true', '', 'capabilities.epochs'],
    ['history', "resume: 'history'", '', 'capabilities.resume'],
    // Claims the runner brings it back, and reconnects by itself the moment it is dropped.
    ['manual', '', "c.on('disconnected', ({ reason }) => { if (reason === 'dropped') c.reconnect().catch(() => undefined); })", 'capabilities.reconnect'],
  ])('%s: the run ends with TARGET_MODULE_FAULT naming the file and the capability', async (name, caps, wrap, hook) => {
    const file = lie(`json-ws-lies-${name}`, caps, wrap);
    const res = await jitter(file);
    expect(res.reconnects).toBeGreaterThan(0);
    expect(res.targetModule.file).toBe(file);
    expect(res.targetModule.faults.map((f) => f.hook)).toEqual([hook]);
    expect(res.validity.valid).toBe(false);
    const flag = res.validity.flags.find((f) => f.code === 'TARGET_MODULE_FAULT');
    expect(flag?.message).toContain(file);
    expect(flag?.message).toContain(hook);
  });
});

describe('restart runners carry the targetModule report', () => {
  it('deploy-impact with a file whose close() throws ends with TARGET_MODULE_FAULT naming the file', async () => {
    const file = lie('json-ws-close-throws', '', "c.close = () => { throw new Error('close broke'); }");
    const r = await runCli('cli/deploy-impact.ts', ['--target-module', file, '--url', server.url, '--clients', '4', '--rate', '10', '--warmup-ms', '1000', '--publisher-down-ms', '300', '--publish-after-ms', '3000', '--settle-ms', '1000', '--json']);
    expect(r.stdout, r.stderr.slice(-2000)).toMatch(/^\{/);
    const res = JSON.parse(r.stdout) as { targetModule?: { file: string; faults: { hook: string }[] }; validity: { flags: { code: string; message: string }[] } };
    expect(res.targetModule?.faults.map((f) => f.hook)).toEqual(['close()']);
    expect(res.validity.flags.find((f) => f.code === 'TARGET_MODULE_FAULT')?.message).toContain(file);
  });
});
