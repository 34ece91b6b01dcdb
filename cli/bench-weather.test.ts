import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatComparison, weatherRows } from '../runners/jitter/table.ts';
import type { JitterResult } from '../runners/jitter/result.ts';

/**
 * `npm run bench -- --weather good-wifi:50,subway:30,laptop-sleep:20 --seed 1` scaled down:
 * time scale 0.01 (laptop-sleep's 6 min -> 3.6 s, tunnels 0.2-0.6 s) against targets whose
 * session and history lifetimes are cut to match (1 s), so the sleep outlives them as the full
 * size outlives their defaults.
 */
const bench = (args: string[], env: Record<string, string>) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('node', ['--import', 'tsx', 'cli/bench.ts', ...args], { env: { ...process.env, ...env }, timeout: 170_000, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });

describe('npm run bench -- --weather', () => {
  const env = { RESULTS_DIR: mkdtempSync(join(tmpdir(), 'rebound-weather-')), REPLAY_SESSION_TTL_SEC: '1', REPLAY_HISTORY_TTL_SEC: '1', SOCKETIO_CSR_MAX_MS: '1000', SOCKETIO_PING_INTERVAL_MS: '500', SOCKETIO_PING_TIMEOUT_MS: '500' };
  const run = bench(['--targets', 'ws,replay,socketio-csr', '--tuned', 'false', '--clients', '10', '--msgs', '60', '--interval', '100', '--jitter', '0', '--settle', '4000', '--weather', 'good-wifi:50,subway:30,laptop-sleep:20', '--weather-scale', '0.01', '--seed', '1', '--json'], env);

  it('gives every target one row per condition; sleepers beyond the session/history lifetime lose by expiry on replay and CSR, ws loses offline with nothing to resume', { timeout: 180_000 }, async () => {
    const r = await run;
    const results = JSON.parse(r.stdout) as JitterResult[];
    expect(results.map((x) => x.target)).toEqual(['ws', 'replay', 'socketio-csr']);
    const rows = weatherRows(results);
    expect(rows.slice(1).map((x) => `${x[0]} ${x[1]}`)).toEqual(['ws', 'replay', 'socketio-csr'].flatMap((t) => [`${t} good-wifi (50%)`, `${t} subway (30%)`, `${t} laptop-sleep (20%)`]));
    expect(formatComparison(results)).toContain('By weather condition (good-wifi:50,subway:30,laptop-sleep:20)');
    const cond = (t: string, c: string) => results.find((x) => x.target === t)!.weather!.conditions.find((x) => x.condition === c)!;
    for (const t of ['ws', 'replay', 'socketio-csr']) {
      expect(cond(t, 'good-wifi').clients, t).toBe(5);
      expect(cond(t, 'good-wifi').lostDeliveries, t).toBe(0);
      expect(cond(t, 'laptop-sleep').lostDeliveries, t).toBeGreaterThan(0);
    }
    expect(cond('ws', 'laptop-sleep').lossByCause).toHaveProperty('offline_nothing_to_resume');
    // Replay: the session is gone and so is the history it would have replayed. A sleeper whose
    // lid closed before its first message (the sleep starts 50-150 ms into publishing at this
    // scale) had no offset and asked by time: no_offset. Never a resume that left a hole.
    const replaySleep = Object.keys(cond('replay', 'laptop-sleep').lossByCause ?? {});
    expect(replaySleep.length).toBeGreaterThan(0);
    expect(replaySleep.every((k) => k === 'session_expired' || k === 'history_evicted' || k === 'no_offset'), replaySleep.join()).toBe(true);
    expect(Object.keys(cond('socketio-csr', 'laptop-sleep').lossByCause ?? {})).toContain('session_expired');
  });

  it('the HTML report has one row of charts per condition: latency CDFs, lost by cause, the condition\'s table rows', { timeout: 180_000 }, async () => {
    await run;
    const html = readFileSync(join(env.RESULTS_DIR, readdirSync(env.RESULTS_DIR).find((f) => f.endsWith('.html'))!), 'utf8');
    for (const c of ['good-wifi', 'subway', 'laptop-sleep']) {
      expect(html).toContain(`Weather: ${c} (`);
      expect(html).toContain(`weather-${c}-latency-cdf-raw`);
      expect(html).toContain(`weather-${c}-table`);
    }
    expect(html).toContain('weather-laptop-sleep-lost');
    expect(html).not.toContain('weather-good-wifi-lost');
  });
});

describe('npm run bench -- --weather with a deploy', () => {
  const env = { RESULTS_DIR: mkdtempSync(join(tmpdir(), 'rebound-deploy-')) };
  // 10 s of publishing with the restart at ~2.5 s: the restarted target must be back while messages
  // are still accepted, or ws has nothing to lose (a loaded box once kept ws down 3.7 s, until
  // 6.2 s, past the end of 6 s of publishing: every broadcast in its downtime was refused, no loss).
  const run = bench(['--targets', 'replay,ws', '--tuned', 'false', '--clients', '8', '--msgs', '100', '--interval', '100', '--jitter', '0', '--settle', '6000', '--weather', 'good-wifi:50,deploy:50', '--weather-scale', '0.1', '--seed', '3', '--json'], env);

  it('restarts each target once, for every condition: replay\'s memory broker comes back empty (server_restarted, resumes rejected), ws has nothing to resume', { timeout: 180_000 }, async () => {
    const r = await run;
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const results = JSON.parse(r.stdout) as JitterResult[];
    for (const x of results) {
      expect(x.chaos.timeline.filter((e) => e.kind === 'restart' && e.applied), x.target).toHaveLength(1);
      expect(x.validity.valid, x.target).toBe(true);
      for (const c of x.weather!.conditions) expect(c.disruptions.find((d) => d.kind === 'restart')?.affectedClients, `${x.target} ${c.condition}`).toBe(4);
    }
    const cond = (t: string, c: string) => results.find((x) => x.target === t)!.weather!.conditions.find((x) => x.condition === c)!;
    // A restart empties replay's memory broker: what its clients missed is gone with it, and it says so.
    expect(cond('replay', 'deploy').lossByCause).toHaveProperty('server_restarted');
    expect(cond('replay', 'deploy').resumeOutcomes).toHaveProperty('rejected:epoch_changed');
    const ws = results.find((x) => x.target === 'ws')!;
    expect(cond('ws', 'deploy').lossByCause, JSON.stringify(ws.chaos.timeline.filter((e) => e.kind === 'restart'))).toHaveProperty('offline_nothing_to_resume');
    expect(formatComparison(results)).toContain('restart: recover p50 / p95');
  });
});
