import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, startRunner, tempResultsDir, type RunnerProcess } from './testing.ts';

/** lib/options.ts's strict rules as the runner's HTTP surface and the CLIs show them. */
const TOKEN = 'validator-token-0123456789abcdef';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const cli = (script: string, args: string[], env: Record<string, string> = {}) => spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });

describe('runner: strict query validation', () => {
  let runner: RunnerProcess;
  beforeAll(async () => {
    runner = await startRunner({ BENCH_RUNNER_TOKEN: TOKEN, RESULTS_DIR: tempResultsDir() });
  }, 30_000);
  afterAll(async () => {
    await runner?.stop();
  });

  it('400 naming the option: two names for one value, hex, padded numbers, control characters', async () => {
    const cases: [string, string, RegExp][] = [
      ['n=5&clients=6', 'clients', /repeats "n"/],
      ['n=0x10', 'n', /plain decimal/],
      ['n=%201', 'n', /plain decimal/],
      ['n=1e1', 'n', /plain decimal/],
      ['stream=a%0Ab', 'stream', /control characters/],
      ['stream=a%1B%5B31m', 'stream', /control characters/],
      ['runId=a%0Ab', 'runId', /control characters|must match/],
      ['label=x%0Dy', 'label', /control characters|must match/],
    ];
    for (const [q, option, why] of cases) {
      const r = await api(runner.url, `/bench-jitter-ws?${q}`, { method: 'POST', token: TOKEN });
      expect(r.status, q).toBe(400);
      expect(r.body.details.option, q).toBe(option);
      expect(r.body.message, q).toMatch(why);
    }
  });

  it('network weather: a bad population is a coded 400 before anything is enqueued (the CLI\'s validator)', async () => {
    const cases: [string, string, RegExp][] = [
      ['weather=good-wifi:60,snow:40', 'RR_ERR_WEATHER_INVALID', /unknown weather condition "snow"; conditions: good-wifi, congested-wifi, lte, 3g, mobile-handover, subway, laptop-sleep, deploy/],
      ['weather=good-wifi:60,lte:30', 'RR_ERR_WEATHER_INVALID', /sum to 90, not 100/],
      ['weather=good-wifi', 'RR_ERR_WEATHER_INVALID', /malformed weather share/],
      ['weather=lte:100&plan=partition', 'RR_ERR_WEATHER_INVALID', /takes the place of network plans/],
      ['weather=good-wifi:50,deploy:50&workers=2&n=4', 'RR_ERR_WEATHER_NEEDS_RESTART', /restarts the target once from the process that holds it/],
    ];
    for (const [q, code, why] of cases) {
      const r = await api(runner.url, `/bench-jitter-ws?${q}`, { method: 'POST', token: TOKEN });
      expect(r.status, q).toBe(400);
      expect(r.body.code, q).toBe(code);
      expect(r.body.message, q).toMatch(why);
    }
  });

  it('Object.prototype names as query parameters are unknown (400), not silently ignored', async () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      const r = await api(runner.url, `/bench-jitter-ws?n=1&${name}=1`, { method: 'POST', token: TOKEN });
      expect(r.status, name).toBe(400);
      expect(r.body, name).toMatchObject({ code: 'RR_ERR_OPTION_UNKNOWN', details: { option: name, unknownParams: [name] } });
    }
  });

  it('a stream named outside Latin-1 (stream=%E2%9C%93) runs end to end on ws, Socket.IO and the replay server', async () => {
    for (const target of ['ws', 'socketio', 'replay']) {
      const r = await api(runner.url, `/bench-jitter-${target}?n=2&msgs=3&interval=20&jitter=0&settle=500&stream=%E2%9C%93`, { method: 'POST', token: TOKEN });
      expect(r.status, `${target}: ${JSON.stringify(r.body).slice(0, 500)}`).toBe(200);
      expect(r.body, target).toMatchObject({ published: 3, publishFailures: 0, expectedDeliveries: 6, receivedDeliveries: 6, effectiveParams: { stream: '✓' } });
    }
  }, 60_000);

  it('/jobs?limit and logLines outside 1..500 are a 400, not a silent clamp', async () => {
    for (const q of ['limit=0', 'limit=501', 'limit=0x10']) {
      const r = await api(runner.url, `/jobs?${q}`, { token: TOKEN });
      expect(r.status, q).toBe(400);
      expect(r.body.details.option).toBe('limit');
    }
    expect((await api(runner.url, '/jobs?limit=500', { token: TOKEN })).status).toBe(200);
    const start = await api(runner.url, '/bench-jitter-ws?n=1&msgs=1&jitter=0&settle=0&async=1', { method: 'POST', token: TOKEN });
    expect(start.status, JSON.stringify(start.body)).toBe(202);
    for (const q of ['logLines=0', 'logLines=501']) {
      const r = await api(runner.url, `/jobs/${start.body.jobId}?${q}`, { token: TOKEN });
      expect(r.status, q).toBe(400);
      expect(r.body.details.option).toBe('logLines');
    }
  }, 30_000);
});

describe('CLIs: help and unknown flags', () => {
  it('bench:proxy --help prints usage, no stack trace; a typo is "unknown option" (exit 2)', () => {
    const help = cli('bench/proxy-overhead.ts', ['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--iterations');
    expect(help.stderr).not.toMatch(/\bat .*\.ts:\d+/);
    const typo = cli('bench/proxy-overhead.ts', ['--jsn']);
    expect(typo.status).toBe(2);
    expect(typo.stderr).toContain('unknown option --jsn');
    expect(typo.stderr).not.toMatch(/\bat .*\.ts:\d+/);
  });

  it('bench:latency accepts --json; --dry-runn is unknown, not "needs a value"', () => {
    // --clients 0 stops it before anything runs: the error is about clients, so --json was accepted.
    const r = cli('cli/latency.ts', ['--json', '--clients', '0']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/"clients" must be >= 1/);
    const typo = cli('cli/latency.ts', ['--dry-runn']);
    expect(typo.stderr).toContain('unknown option --dry-runn');
  });

  it('bench --help lists only flags it accepts (avalanche knobs by env name, one --clients)', () => {
    const r = cli('cli/bench.ts', ['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout.match(/^\s+--clients\b/gm)).toHaveLength(1);
    expect(r.stdout).not.toMatch(/^\s+--restart\b/m);
    expect(r.stdout).not.toMatch(/^\s+--rate\b/m);
    expect(r.stdout).toContain('AVALANCHE_RESTART');
  });

  it('FILTER=nosuch bench:rebaseline is an error listing the ids; DRY_RUN=1 lists the idle tests it skips and why', () => {
    const bad = cli('shards/manifest/main.ts', [], { FILTER: 'nosuch' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/FILTER "nosuch" matches no test.*ids: .*jitter-replay-small/);
    const dry = cli('shards/manifest/main.ts', [], { DRY_RUN: '1', FILTER: '' });
    expect(dry.status).toBe(0);
    expect(dry.stdout).toMatch(/skipped idle-\S+: idle tests .*INCLUDE_IDLE=1/);
  });
});
