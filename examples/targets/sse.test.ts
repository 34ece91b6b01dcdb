import { afterEach, describe, expect, it } from 'vitest';
import { runCliToExit as runCli } from '../../cli/testing.ts';
import { sseServer } from './servers.ts';

/**
 * Worked example 2 (docs/targets.md): an SSE server of a team's own (examples/targets/servers.ts),
 * driven through examples/targets/sse.ts by the real CLIs.
 */

type JitterJson = Record<string, unknown> & {
  validity: { valid: boolean; flags: { code: string }[] };
  lossByCause: Record<string, number>;
  resumeOutcomes: Record<string, number>;
  lostDeliveries: number;
  replayedDeliveries: number;
};

const jitter = (url: string) => ['--target-module', 'examples/targets/sse.ts', '--url', url, '--clients', '12', '--msgs', '60', '--interval', '100', '--jitter', '1', '--settle', '3000', '--seed', '7', '--json'];

let server: Awaited<ReturnType<typeof sseServer>> | undefined;
afterEach(() => server?.close());

describe('example 2: Server-Sent Events with Last-Event-ID through a target file', () => {
  it('history long enough: every drop is resumed from the history, nothing lost', async () => {
    server = await sseServer({ history: 1000, retryMs: 400 });
    const r = await runCli('cli/jitter.ts', jitter(server.url));
    expect(r.code, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout) as JitterJson;
    expect(res.target).toBe('sse');
    // The one flag a loaded machine may add is the runner's own loop lag (a warning about the rig, not the target).
    expect(res.validity.valid).toBe(true);
    expect(res.validity.flags.filter((f) => f.code !== 'RUNNER_LOOP_LAG')).toEqual([]);
    expect(res).toMatchObject({ published: 60, publishFailures: 0, connectedClients: 12, lostDeliveries: 0, lossByCause: {} });
    expect(res.reconnects as number).toBeGreaterThan(0);
    // Every reconnect asked with Last-Event-ID and the history answered; what it missed came as replay.
    expect(res.resumeOutcomes).toEqual({ history_filled: res.reconnects });
    expect(res.replayedDeliveries).toBeGreaterThan(0);
    expect(res.targetModule).toEqual({ file: 'examples/targets/sse.ts', faults: [] });
  });

  it('history too short: the loss is booked to the evicted history, resume by resume', async () => {
    // Offline ~1.5 s at 10 messages/s misses ~15; the server keeps 3.
    server = await sseServer({ history: 3, retryMs: 1500 });
    const r = await runCli('cli/jitter.ts', jitter(server.url));
    expect(r.code, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout) as JitterJson;
    expect(res.lostDeliveries).toBeGreaterThan(0);
    expect(res.lossByCause).toEqual({ history_evicted: res.lostDeliveries });
    expect(res.resumeOutcomes['rejected:history_evicted']).toBeGreaterThan(0);
    expect(Object.values(res.resumeOutcomes).reduce((a, b) => a + b, 0)).toBe(res.reconnects);
    expect(res.targetModule).toEqual({ file: 'examples/targets/sse.ts', faults: [] });
  });

  it('capacity S1 holds its full clients from the CLI (no lean client: SSE is not a WebSocket)', async () => {
    server = await sseServer({ history: 100, retryMs: 400 });
    const r = await runCli('cli/capacity.ts', ['--target-module', 'examples/targets/sse.ts', '--url', server.url, '--scenarios', 'S1', '--s1-counts', '40', '--s1-ramps', '200', '--s1-runs', '1', '--s1-hold', '1', '--s1-warmup', '0', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const s1 = (JSON.parse(r.stdout) as { results: { scenario: string; steps: { metrics: Record<string, unknown> }[]; validity: { flags: { code: string }[] } }[] }).results[0]!;
    expect(s1.scenario).toBe('S1');
    expect(s1.steps[0]!.metrics).toMatchObject({ subscribedMin: 40, failureMode: 'completed' });
    // No /metrics and not a process the runner started: no memory figure, said as a warning (and the rig's loop lag, under load).
    expect(s1.validity.flags.map((f) => f.code).filter((c) => c !== 'RUNNER_LOOP_LAG')).toEqual(['TARGET_METRICS_UNAVAILABLE']);
  });
});
