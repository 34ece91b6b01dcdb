import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliToExit as runCli } from '../../cli/testing.ts';
import { jsonWsServer } from './servers.ts';

/**
 * Example 1's target file through every runner that publishes, as a user runs them: the CLI with
 * `--target-module examples/targets/json-ws.ts --url <its server>`. The server takes no
 * `/_broadcast` (404): a runner that published there instead of through the file's `publish`
 * would have nothing accepted.
 */
const MODULE = ['--target-module', 'examples/targets/json-ws.ts'];
const SERVE = resolve('examples/targets/serve-json-ws.ts');

type RunResult = Record<string, unknown> & { validity: { valid: boolean; flags: { code: string }[] }; lossByCause: Record<string, number>; lostDeliveries: number; published: number; publishFailures: number };

async function runJson(script: string, args: readonly string[]): Promise<RunResult> {
  const r = await runCli(script, [...MODULE, ...args, '--json']);
  expect(r.code, r.stderr.slice(-2000)).toBe(0);
  return JSON.parse(r.stdout) as RunResult;
}

const causesAddUp = (r: RunResult) => expect(Object.values(r.lossByCause).reduce((a, b) => a + b, 0)).toBe(r.lostDeliveries);

/** The example's server as its own process (a user's server beside the runner); `pidFile` names the process now serving. */
async function serverProcess(pidFile: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVE, '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((res, rej) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /^(http:\/\/\S+)\n/.exec(out);
      if (m) res(m[1]!);
    });
    child.once('exit', (code) => rej(new Error(`serve-json-ws.ts exited (${code}) before listening`)));
  });
  writeFileSync(pidFile, String(child.pid));
  return { url, child };
}

function killServing(pidFile: string, child: ChildProcess): void {
  child.kill('SIGKILL');
  const pid = Number(readFileSync(pidFile, 'utf8'));
  if (Number.isInteger(pid) && pid > 1 && pid !== child.pid) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

let server: Awaited<ReturnType<typeof jsonWsServer>>;
beforeAll(async () => void (server = await jsonWsServer()));
afterAll(() => server.close());

describe('example 1 through every publishing runner (its publish, never /_broadcast)', () => {
  it('latency and throughput: valid, every message accepted by its own endpoint and delivered', async () => {
    const lat = await runJson('cli/latency.ts', ['--url', server.url, '--clients', '10', '--msgs', '30', '--interval', '50', '--settle', '2000']);
    expect(lat).toMatchObject({ test: 'latency', target: 'json-ws', published: 30, publishFailures: 0, expectedDeliveries: 300, receivedDeliveries: 300, targetModule: { file: 'examples/targets/json-ws.ts', faults: [] } });
    expect(lat.validity.flags.filter((f) => f.code !== 'RUNNER_LOOP_LAG')).toEqual([]);
    causesAddUp(lat);
    const tp = await runJson('cli/throughput.ts', ['--url', server.url, '--clients', '10', '--total', '50', '--interval-ms', '20', '--drain', '3']);
    expect(tp).toMatchObject({ test: 'throughput', target: 'json-ws', published: 50, publishFailures: 0, expectedDeliveries: 500, receivedDeliveries: 500 });
    expect(tp.validity.valid).toBe(true);
    causesAddUp(tp);
  });

  it('a chaos plan through jitter (--plan reset): connections reset by the proxy, loss booked as nothing to resume, causes add up', async () => {
    const r = await runJson('cli/jitter.ts', ['--url', server.url, '--clients', '12', '--msgs', '80', '--interval', '100', '--plan', 'reset', '--groups', '2', '--jitter', '1', '--chaos-ms', '1000', '--settle', '3000', '--seed', '3']);
    expect(r).toMatchObject({ target: 'json-ws', published: 80, publishFailures: 0 });
    expect(r.validity.flags.filter((f) => f.code !== 'RUNNER_LOOP_LAG')).toEqual([]);
    const chaos = r.chaos as { plan: string; disruptions: { kind: string; events: number }[] };
    expect(chaos.plan).toBe('reset');
    expect(chaos.disruptions[0]!.events).toBeGreaterThan(0);
    expect(r.lostDeliveries).toBeGreaterThan(0);
    // The example restores nothing on a reconnect: what was published while a client was away is gone.
    expect(Object.keys(r.lossByCause)).toEqual(['offline_nothing_to_resume']);
    causesAddUp(r);
  });

  it("deploy-impact: its standalone publisher process loads the target file and publishes through it across the app's redeploy", async () => {
    const r = await runJson('cli/deploy-impact.ts', ['--url', server.url, '--clients', '10', '--rate', '10', '--warmup-ms', '1500', '--publisher-down-ms', '500', '--publish-after-ms', '9000', '--settle-ms', '2000']);
    const pub = r.publisher as { ok: boolean; newPid: number; oldPid: number; gapMessages: number };
    expect(r.validity).toEqual({ valid: true, flags: [] });
    expect(pub.ok).toBe(true);
    expect(pub.newPid).not.toBe(pub.oldPid);
    // Both processes got messages accepted: before the kill and after the new one resumed.
    expect(r.published).toBeGreaterThan(15);
    expect(r).toMatchObject({ publishFailures: 0, droppedConnections: 0, lostDeliveries: 0 });
    expect(r.receivedDeliveries).toBe(10 * r.published);
    causesAddUp(r);
  });

  it('avalanche with an operator restart command: the server process is killed and started again on its port, every client comes back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rebound-json-ws-'));
    const pidFile = join(dir, 'pid');
    const proc = await serverProcess(pidFile);
    const port = new URL(proc.url).port;
    // What an operator's deploy script does: stop the server, start it again on the same port.
    process.env.AVALANCHE_RESTART_COMMAND = `kill -9 $(cat ${pidFile}) && (${process.execPath} --import tsx ${SERVE} ${port} >/dev/null 2>&1 & echo $! > ${pidFile})`;
    try {
      const r = await runJson('cli/avalanche.ts', ['--url', proc.url, '--restart', 'command', '--clients', '10', '--rate', '10', '--warmup-ms', '1500', '--publish-after-ms', '6000', '--recovery-timeout-ms', '30000', '--settle-ms', '2000']);
      expect(r.validity).toEqual({ valid: true, flags: [] });
      expect((r.restart as { ok: boolean; mode: string }).ok).toBe(true);
      expect(r).toMatchObject({ target: 'json-ws', droppedConnections: 10, neverReconnected: 0 });
      expect(r.published).toBeGreaterThan(0);
      // Refused while the server was down (publisher side) and missed while offline (no resume).
      expect(r.lostDeliveries).toBeGreaterThan(0);
      causesAddUp(r);
    } finally {
      delete process.env.AVALANCHE_RESTART_COMMAND;
      killServing(pidFile, proc.child);
    }
  }, 120_000);

  it('capacity S3 (fan-out) and S4 (hot stream): the batch publisher sends one message per request through its publish; every accepted message delivered', async () => {
    const rig = (p: string) => [`--${p}-step-sec`, '1.5', `--${p}-warmup-sec`, '0', `--${p}-loaders`, '1', `--${p}-max-loader-lag-ms`, '5000', `--${p}-max-p99-ms`, '10000', `--${p}-max-publisher-late-ms`, '10000', `--${p}-min-machine-idle-pct`, '0'];
    const r = await runCli('cli/capacity.ts', [...MODULE, '--url', server.url, '--scenarios', 'S3,S4', '--s3-connections', '20', '--s3-streams', '4', '--s3-rates', '40', ...rig('s3'), '--s4-connections', '10', '--s4-publishers', '2', '--s4-rate-per-publisher', '10', ...rig('s4'), '--json']);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const results = (JSON.parse(r.stdout) as { results: { scenario: string; validity: { valid: boolean }; steps: { metrics: Record<string, number>; ledger: Record<string, number> }[] }[] }).results;
    expect(results.map((x) => x.scenario)).toEqual(['S3', 'S4']);
    for (const s of results) {
      expect(s.validity.valid).toBe(true);
      const step = s.steps[0]!;
      expect(step.metrics.published).toBeGreaterThan(0);
      expect(step.metrics).toMatchObject({ publishFailed: 0, published: step.metrics.sent });
      expect(step.ledger).toMatchObject({ lostDeliveries: 0, duplicates: 0, unacceptedDeliveries: 0 });
      expect(step.ledger.receivedDeliveries).toBe(step.ledger.expectedDeliveries);
    }
    expect(results[0]!.steps[0]!.ledger.expectedDeliveries).toBe(results[0]!.steps[0]!.metrics.published! * 5);
  }, 120_000);

  it('capacity S1 against the server in its own process: bytes per connection from /proc (it answers no /metrics), no TARGET_METRICS_UNAVAILABLE', async () => {
    const pidFile = join(mkdtempSync(join(tmpdir(), 'rebound-json-ws-')), 'pid');
    const proc = await serverProcess(pidFile);
    try {
      const r = await runCli('cli/capacity.ts', [...MODULE, '--url', proc.url, '--scenarios', 'S1', '--s1-counts', '200', '--s1-ramps', '500', '--s1-runs', '1', '--s1-hold', '1', '--s1-warmup', '0', '--json']);
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      const s1 = (JSON.parse(r.stdout) as { results: { steps: { metrics: Record<string, unknown> }[]; validity: { flags: { code: string }[] } }[] }).results[0]!;
      expect(s1.steps[0]!.metrics).toMatchObject({ subscribedMin: 200, failureMode: 'completed' });
      expect(s1.validity.flags.map((f) => f.code)).not.toContain('TARGET_METRICS_UNAVAILABLE');
      expect(s1.steps[0]!.metrics.bytesPerConnection as number).toBeGreaterThan(0);
      expect(s1.steps[0]!.metrics.baselineRssBytes as number).toBeGreaterThan(0);
    } finally {
      killServing(pidFile, proc.child);
    }
  }, 120_000);

  describe('capacity S6 (graceful stop) against --url: stopped only by the operator command in CAPACITY_S6_STOP_COMMAND', () => {
    type S6 = { scenario: string; failureMode: string | null; validity: { valid: boolean; flags: { code: string; severity: string; message: string }[] }; steps: { pass: boolean; reason?: string; metrics: Record<string, unknown> }[] };
    const S6_ARGS = ['--scenarios', 'S6', '--s6-connections', '20', '--s6-streams', '2', '--s6-ramp', '200', '--s6-interval-ms', '100', '--s6-pre-stop-sec', '1'];
    const runS6 = async (url: string, args: readonly string[]): Promise<S6> => {
      const r = await runCli('cli/capacity.ts', [...MODULE, '--url', url, ...S6_ARGS, ...args, '--json']);
      return (JSON.parse(r.stdout) as { results: S6[] }).results[0]!;
    };
    const codes = (r: S6) => r.validity.flags.map((f) => f.code);
    afterAll(() => void delete process.env.CAPACITY_S6_STOP_COMMAND);

    it('without the env: not run, and the warning says how to enable it', async () => {
      delete process.env.CAPACITY_S6_STOP_COMMAND;
      const r = await runS6(server.url, []);
      expect(r.steps).toEqual([]);
      expect(codes(r)).toEqual(['NOT_RUN']);
      expect(r.failureMode).toMatch(/CAPACITY_S6_STOP_COMMAND/);
    }, 60_000);

    it('the command SIGTERMs the server process: a stop time to its listener refusing, what each client was told, exit status unknown', async () => {
      const pidFile = join(mkdtempSync(join(tmpdir(), 'rebound-json-ws-')), 'pid');
      const proc = await serverProcess(pidFile);
      process.env.CAPACITY_S6_STOP_COMMAND = `kill -TERM $(cat ${pidFile})`;
      try {
        const r = await runS6(proc.url, ['--s6-grace-ms', '10000', '--s6-max-stop-ms', '10000']);
        expect(r.failureMode).toBe('none');
        expect(codes(r)).toContain('STOP_EXIT_UNKNOWN');
        expect(codes(r)).not.toContain('STOP_COMMAND_FAILED');
        expect(r.validity.valid).toBe(true);
        const m = r.steps[0]!.metrics;
        expect(r.steps[0]!.pass).toBe(true);
        expect(m).toMatchObject({ subscribed: 20, stopEnd: 'listener refused connections', exitCode: null, exitSignal: null });
        expect(m.stopMs as number).toBeGreaterThanOrEqual(0);
        expect(m.stopMs as number).toBeLessThan(10_000);
        expect(m.published as number).toBeGreaterThan(0);
        // Every held client's last word is booked, from the same StopBook as a local target's.
        const told = JSON.parse(m.told as string) as Record<string, number>;
        expect(Object.values(told).reduce((a, b) => a + b, 0)).toBe(20);
      } finally {
        delete process.env.CAPACITY_S6_STOP_COMMAND;
        killServing(pidFile, proc.child);
      }
    }, 120_000);

    it("a command that fails is the command's fatal flag, not the target's: STOP_COMMAND_FAILED with its exit and output", async () => {
      process.env.CAPACITY_S6_STOP_COMMAND = 'echo no-such-service >&2; exit 3';
      try {
        const r = await runS6(server.url, ['--s6-grace-ms', '1000', '--s6-max-stop-ms', '1000']);
        expect(r.validity.valid).toBe(false);
        const flag = r.validity.flags.find((f) => f.code === 'STOP_COMMAND_FAILED')!;
        expect(flag).toMatchObject({ severity: 'fatal' });
        expect(flag.message).toMatch(/CAPACITY_S6_STOP_COMMAND failed \(exit 3\), not the target: no-such-service/);
        expect(r.steps[0]!.pass).toBe(false);
        expect(r.steps[0]!.reason).toBe('the stop command failed (exit 3)');
      } finally {
        delete process.env.CAPACITY_S6_STOP_COMMAND;
      }
    }, 60_000);
  });
});
