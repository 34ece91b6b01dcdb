import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runCliToExit as runCli } from '../../cli/testing.ts';
import { jsonWsServer, sseServer } from '../../examples/targets/servers.ts';
import { useTestRedisEnv } from '../../services/common/redis-test-env.ts';
import { withTarget } from '../measure/local-target.ts';
import { getTarget } from '../targets/index.ts';
import { checkTarget, type CheckReport } from './check.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const failed = (r: CheckReport) => r.verdicts.filter((v) => !v.ok && !v.skipped).map((v) => `${v.step}: ${v.reason}`);

// The Redis variants' services find their Redis at REDIS_URL: a redis-server of this file's own.
useTestRedisEnv();

describe('target:check: every built-in passes against its own server', () => {
  it.each(['ws', 'uws', 'socketio', 'socketio-csr', 'replay', 'socketio-redis', 'socketio-csr-redis', 'replay-redis'])('%s', async (name) => {
    const t = getTarget(name);
    if (t.unavailable?.()) return; // uws without its binary here: the registry says so, the walk has nothing to start
    const r = await withTarget(t, undefined, (url) => checkTarget({ target: t, url }));
    expect(failed(r)).toEqual([]);
    expect(r.ok).toBe(true);
    // Every capability a built-in declares was walked, none skipped but what it does not declare.
    expect(r.verdicts.filter((v) => v.skipped).map((v) => v.step)).toEqual(t.capabilities.whispers ? [] : ['whispers']);
  });
  // anycable: an external anycable-go, whose binary is fetched from GitHub (not reachable here); its
  // client walks against the replay server, which speaks the same extended protocol.
  it('anycable, against the wire-compatible replay server', async () => {
    const t = getTarget('anycable');
    const r = await withTarget(getTarget('replay'), undefined, (url) => checkTarget({ target: t, url }));
    expect(failed(r)).toEqual([]);
    expect(r.ok).toBe(true);
  });
});

type Json = CheckReport;
let close: (() => unknown) | undefined;
afterEach(() => close?.());

describe('target:check from the CLI on the worked examples', () => {
  it('example 1 (json-ws) passes, its lean client at 1,000 connections included', async () => {
    const s = await jsonWsServer();
    close = s.close;
    const r = await runCli('cli/target-check.ts', ['--target-module', 'examples/targets/json-ws.ts', '--url', s.url, '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as Json;
    expect(j.verdicts.find((v) => v.step === 'lean')).toMatchObject({ ok: true, reason: expect.stringContaining('1000 lean clients subscribed') });
    expect(j.verdicts.find((v) => v.step === 'contract')).toMatchObject({ ok: true });
  });

  it('example 2 (sse) passes: the reconnect restored history, as declared', async () => {
    const s = await sseServer({ history: 100, retryMs: 400 });
    close = s.close;
    const r = await runCli('cli/target-check.ts', ['--target-module', 'examples/targets/sse.ts', '--url', s.url, '--json']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as Json;
    expect(j.verdicts.find((v) => v.step === 'restored')).toMatchObject({ ok: true, reason: expect.stringContaining("declared resume 'history'; the reconnect restored history") });
    expect(j.verdicts.find((v) => v.step === 'lean')).toMatchObject({ skipped: true });
  });

  it("a target declaring resume 'history' against a server that restores nothing fails 'restored', exit 1", async () => {
    const s = await sseServer({ history: 100, retryMs: 400, ignoreLastEventId: true });
    close = s.close;
    const r = await runCli('cli/target-check.ts', ['--target-module', 'examples/targets/sse.ts', '--url', s.url]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/FAIL {2}restored +declared resume 'history'; the reconnect restored nothing: 0 of 3/);
    expect(r.stdout).toMatch(/PASS {2}reconnects/);
  });

  it("a 'library' reconnect that has not come two step bounds after the drop fails 'reconnects', exit 1", async () => {
    const s = await sseServer({ history: 100, retryMs: 60_000 }); // EventSource waits the server's retry: a minute
    close = s.close;
    const r = await runCli('cli/target-check.ts', ['--target-module', 'examples/targets/sse.ts', '--url', s.url, '--step-timeout-ms', '3000']);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/FAIL {2}reconnects +capabilities\.reconnect is 'library' but the client emitted no `connected` \(attempt > 0\) within 6000 ms of the drop \(2 x --step-timeout-ms\)/);
  });

  it('a connect() that never resolves fails "connects" naming the hook, within the bound', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rebound-check-'));
    const file = join(dir, 'hangs.ts');
    writeFileSync(file, `import { ClientBase, defineTarget, LeanClient } from '${ROOT}target.ts';
class Hangs extends ClientBase { connect() { return new Promise<void>(() => {}); } drop() { return false; } reconnect() { return this.connect(); } close() {} }
export default defineTarget({ name: 'hangs', description: 'never connects', offlineFloorMs: 0, capabilities: { reconnect: 'manual', resume: 'none', offsets: false, epochs: false, whispers: false, library: 'ws' },
  createClient: (o) => new Hangs(o), createLeanClient: (o) => new LeanClient(o, { url: (b) => b.replace(/^http/, 'ws') + '/ws', onOpen: () => { throw new Error('bad opener'); }, onMessage: () => undefined }) });
`);
    const s = await jsonWsServer();
    close = s.close;
    const t0 = Date.now();
    const r = await runCli('cli/target-check.ts', ['--target-module', file, '--url', s.url, '--step-timeout-ms', '1000', '--json']);
    expect(r.code, r.stderr).toBe(1);
    const j = JSON.parse(r.stdout) as Json;
    expect(j.verdicts[0]).toMatchObject({ step: 'connects', ok: false, reason: '2 of 2 clients failed: connect() did not settle within 1000 ms' });
    expect(j.verdicts[0]!.ms).toBeLessThan(5000);
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(j.ok).toBe(false);
  });
});
