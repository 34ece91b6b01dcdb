import { afterAll, describe, expect, it } from 'vitest';
import { withTarget } from '../../engine/measure/local-target.ts';
import { getTarget } from '../../engine/targets/index.ts';
import { parseJitterOptions } from '../../runners/jitter/options.ts';
import { runJitter } from '../../runners/jitter/run.ts';
import type { JitterResult } from '../../runners/jitter/result.ts';
import { startToxiproxyTarget, type ToxiproxyTarget } from '../testing.ts';
import { BLACKHOLE } from '../plans/catalog.ts';
import { SLEEP_MS, WEATHER } from './conditions.ts';
import { parseWeather, planWeather } from './population.ts';

/**
 * Every condition's time line on a real proxy at small scale: Rebound's embedded proxy, or with
 * TOXIPROXY_URL a real Toxiproxy (chaos/toxiproxy/external-mode.sh runs this file that way).
 * What the proxy holds is read over its API while the run goes on; the offline spans are read
 * back from the run's own books (per-condition disruption reports).
 */
// Every network condition, two clients each; deploy (a restart of the target, every client's) has its own run below.
const SPEC = 'good-wifi:15,congested-wifi:15,lte:14,3g:14,mobile-handover:14,subway:14,laptop-sleep:14';
const SCALE = 0.02;

interface Seen {
  toxics: Map<string, Set<string>>;
  disabled: Set<string>;
  attrs: Map<string, Record<string, number>>;
}

/** Poll GET /proxies every 20 ms: which toxics each proxy held, and which proxies were disabled at some point. */
function watchProxies(api: string) {
  const seen: Seen = { toxics: new Map(), disabled: new Set(), attrs: new Map() };
  let on = true;
  const loop = (async () => {
    while (on) {
      const all = (await fetch(`${api}/proxies`).then((r) => r.json(), () => ({}))) as Record<string, { enabled: boolean; toxics: { name: string; attributes: Record<string, number> }[] }>;
      for (const [name, p] of Object.entries(all)) {
        if (!name.startsWith('rr-ws-')) continue;
        if (!p.enabled) seen.disabled.add(name);
        const set = seen.toxics.get(name) ?? new Set();
        for (const t of p.toxics) {
          set.add(t.name);
          seen.attrs.set(`${name}/${t.name}`, t.attributes);
        }
        seen.toxics.set(name, set);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    seen,
    stop: async () => {
      on = false;
      await loop;
    },
  };
}

/** The proxy groups the seed dealt to laptop-sleep. */
function sleepGroups(r: JitterResult): number[] {
  const plan = planWeather({ shares: parseWeather(SPEC), seed: r.seed, clients: 14, windowMs: 50 * 200, scale: SCALE });
  return plan.groupCondition.flatMap((c, g) => (plan.shares[c]!.condition === 'laptop-sleep' ? [g] : []));
}

describe('network weather on a real proxy', () => {
  let tp: ToxiproxyTarget;
  afterAll(async () => {
    await tp?.close();
  });
  const run = (async () => {
    tp = await startToxiproxyTarget();
    const watch = watchProxies(tp.url);
    const o = parseJitterOptions({ values: { target: 'ws', clients: '14', msgs: '50', interval: '200', jitter: '0', weather: SPEC, 'weather-scale': String(SCALE), seed: '11', settle: '15000', 'toxiproxy-url': tp.url }, env: {}, origin: 'CLI' });
    const r = await withTarget(getTarget('ws'), undefined, (url) => runJitter(o, url).result);
    await watch.stop();
    return { r, seen: watch.seen };
  })();

  it('every step happens when the seed says, on its own condition\'s proxies, and each proxy held its condition\'s toxics', { timeout: 120_000 }, async () => {
    const { r, seen } = await run;
    const plan = planWeather({ shares: parseWeather(SPEC), seed: r.seed, clients: 14, windowMs: 50 * 200, scale: SCALE });
    // The executed time line is the seeded one, step for step, each applied close to its planned time.
    const key = (s: { kind: string; target: number; plannedAtMs?: number; atMs: number }) => `${s.kind}/g${s.target}@${s.plannedAtMs ?? s.atMs}`;
    expect(r.chaos.timeline.map(key).sort()).toEqual(plan.steps.map(key).sort());
    // Each step starts at its planned time, or (steps adding the same toxics to one proxy follow each
    // other) once the one before it on that proxy was lifted, if a loaded box lifted that one late.
    const planned = new Map(plan.steps.map((st) => [key(st), `${st.target}/${st.toxics?.map((t) => t.name).join(',') ?? st.kind}`]));
    const toxicsOf = (e: (typeof r.chaos.timeline)[number]) => planned.get(key(e))!;
    const liftedAt = new Map<string, number>();
    for (const ev of [...r.chaos.timeline].sort((a, b) => a.plannedAtMs - b.plannedAtMs)) {
      expect(ev.applied, `${key(ev)} ${ev.error ?? ''}`).toBe(true);
      const due = Math.max(ev.plannedAtMs, liftedAt.get(toxicsOf(ev)) ?? 0);
      expect(ev.atMs - due, key(ev)).toBeLessThan(1000);
      expect(ev.atMs - ev.plannedAtMs, key(ev)).toBeGreaterThanOrEqual(-1);
      liftedAt.set(toxicsOf(ev), ev.endedAtMs ?? Infinity);
    }
    expect(r.chaos.groups).toBe(14); // two proxies per condition (two clients each)
    const proxy = (g: number) => [...seen.toxics.keys()].find((n) => n === `rr-${r.runId}-g${g}`)!;
    plan.groupCondition.forEach((c, g) => {
      const name = proxy(g);
      const cond = WEATHER[plan.shares[c]!.condition];
      // The base link, with the condition's figures (read back over the API).
      expect(seen.toxics.get(name), name).toContain('rr_w_base_lat_down');
      expect(seen.attrs.get(`${name}/rr_w_base_lat_down`)).toMatchObject({ latency: cond.base.downMs, jitter: cond.base.downJitterMs });
      if (cond.base.downKBps) expect(seen.attrs.get(`${name}/rr_w_base_bw_down`)).toMatchObject({ rate: cond.base.downKBps });
      // Every outage spell of a few hundred ms or more was seen on this proxy (shorter ones can fall between polls; their timing is checked above).
      for (const st of plan.steps.filter((s) => s.target === g && s.durationMs >= 300)) {
        if (st.kind === 'blackhole') expect(seen.toxics.get(name), `${name} ${st.kind}`).toContain(BLACKHOLE.down);
        if (st.kind === 'reset') expect(seen.toxics.get(name), `${name} ${st.kind}`).toContain('rr_reset');
        if (st.kind === 'partition') expect(seen.disabled.has(name), `${name} partition`).toBe(true);
        if (st.kind === 'link') expect(seen.toxics.get(name), `${name} spell`).toContain(st.toxics![0]!.name);
      }
      // No outage this condition does not have.
      if (!cond.spells.some((s) => s.kind === 'blackhole')) expect(seen.toxics.get(name), name).not.toContain(BLACKHOLE.down);
      if (!cond.spells.some((s) => s.kind === 'partition')) expect(seen.disabled.has(name), name).toBe(false);
    });
  });

  it('the offline spans land on the right clients: sleepers offline the whole (scaled) sleep, tunnels cut, good Wi-Fi never', { timeout: 120_000 }, async () => {
    const { r } = await run;
    const cond = (n: string) => r.weather!.conditions.find((c) => c.condition === n)!;
    expect(r.weather).toMatchObject({ spec: SPEC, scale: SCALE });
    expect(r.weather!.conditions.map((c) => c.clients)).toEqual(new Array(7).fill(2));
    const kind = (n: string, k: string) => cond(n).disruptions.find((d) => d.kind === k);
    const sleep = kind('laptop-sleep', 'blackhole')!;
    expect(sleep.affectedClients).toBe(2);
    expect(sleep.recoverMs.count).toBe(2);
    // From the step's start to the lift at its planned end: a step that started late (a loaded box) is offline that much less.
    const late = Math.max(...r.chaos.timeline.filter((e) => e.kind === 'blackhole' && sleepGroups(r).includes(e.target)).map((e) => e.atMs - e.plannedAtMs));
    expect(sleep.recoverMs.p50).toBeGreaterThanOrEqual(SLEEP_MS * SCALE - late - 50);
    expect(kind('subway', 'blackhole')!.recoverMs.count).toBeGreaterThanOrEqual(2);
    expect(kind('mobile-handover', 'reset')!.detectMs.count).toBeGreaterThanOrEqual(2);
    for (const n of ['good-wifi', 'congested-wifi', 'lte', '3g']) {
      expect(cond(n).disruptions.map((d) => d.kind), n).toEqual(['link']);
      expect(cond(n).lostDeliveries, n).toBe(0);
      expect(cond(n).deliveryRatePct, n).toBe(100);
    }
    // ws is at-most-once: what the sleepers missed is lost while offline, nothing to resume.
    expect(cond('laptop-sleep').lostDeliveries).toBeGreaterThan(0);
    expect(cond('laptop-sleep').lossByCause).toHaveProperty('offline_nothing_to_resume');
    // The sleep's connection never delivered a byte: the lift closes it, so none of that is loss while connected
    // (the lift's close lands after the lift returns; the span must outlive the lift, not be dropped as "never noticed").
    expect(cond('laptop-sleep').lossByCause?.lost_while_connected ?? 0).toBe(0);
    // The conditions add up to the run.
    expect(r.weather!.conditions.reduce((n, c) => n + c.lostDeliveries, 0)).toBe(r.lostDeliveries);
    expect(r.weather!.conditions.reduce((n, c) => n + c.expectedDeliveries, 0)).toBe(r.expectedDeliveries);
    // Latency per condition, raw and over its own minimum: 3G's base delay shows (in the median: the
    // first message races the base link's API call, and lifting a toxic lets what it held through at once).
    expect(cond('3g').latencyRawMs.p50).toBeGreaterThanOrEqual(WEATHER['3g'].base.downMs - WEATHER['3g'].base.downJitterMs);
    expect(cond('good-wifi').latencyRawMs.p50).toBeLessThan(cond('3g').latencyRawMs.p50);
    expect(cond('3g').latencyOverMinMs.skewFloor).toBe(cond('3g').latencyRawMs.min);
  });
});

describe('deploy: the target itself restarts, and every client sees it', () => {
  const DEPLOY = 'good-wifi:50,deploy:50';
  const values = (extra: Record<string, string>) => ({ target: 'ws', clients: '8', msgs: '60', interval: '200', jitter: '0', weather: DEPLOY, 'weather-scale': '0.1', seed: '5', settle: '15000', ...extra });
  let tp: ToxiproxyTarget | undefined;
  afterAll(async () => {
    await tp?.close();
  });

  it('restarts the target process once, when the seed says; every condition books the restart', { timeout: 120_000 }, async () => {
    tp = await startToxiproxyTarget();
    const o = parseJitterOptions({ values: values({ 'toxiproxy-url': tp.url }), env: {}, origin: 'CLI' });
    let pids: number[] = [];
    const r = await withTarget(getTarget('ws'), undefined, async (url, svc, nodes) => {
      const res = await runJitter(o, url, { targetPid: svc!.pid, nodes: nodes! }).result;
      pids = [svc!.pid, nodes!.handles[0]!.pid];
      return res;
    });
    // A new process on the same port: a real restart, not a network outage.
    expect(pids[1]).not.toBe(pids[0]);
    const planned = planWeather({ shares: parseWeather(DEPLOY), seed: r.seed, clients: 8, windowMs: 60 * 200, scale: 0.1 }).steps.filter((s) => s.kind === 'restart');
    expect(planned).toHaveLength(1);
    const done = r.chaos.timeline.filter((e) => e.kind === 'restart');
    expect(done).toHaveLength(1);
    expect(done[0]!.plannedAtMs).toBe(planned[0]!.atMs);
    expect(done[0]!.applied).toBe(true);
    expect(done[0]!.serverDownMs).toBeGreaterThan(0);
    expect(r.restartFailures).toBeUndefined();
    // Broadcasts refused while the target was down are the deploy's: a warning, and the run stays valid.
    expect(r.validity.flags.filter((f) => f.severity === 'fatal')).toEqual([]);
    expect(r.publishFailuresDuringRestarts).toBe(r.publishFailures);
    expect(r.validity.valid).toBe(true);
    // Every client, in both conditions, was cut by the restart and came back.
    for (const c of r.weather!.conditions) {
      const restart = c.disruptions.find((d) => d.kind === 'restart')!;
      expect(restart, c.condition).toBeDefined();
      expect(restart.affectedClients, c.condition).toBe(4);
      expect(restart.detectMs.count, c.condition).toBe(4);
      expect(restart.recoverMs.count, c.condition).toBe(4);
    }
    // deploy's own clients have Wi-Fi and nothing else: the restart is their only outage.
    expect(r.weather!.conditions.find((c) => c.condition === 'deploy')!.disruptions.map((d) => d.kind).sort()).toEqual(['link', 'restart']);
    // ws keeps nothing across a restart: what was published while they were away is lost, nothing
    // to resume. Whether any accepted publish falls between the target's return and a client's
    // reconnect is a race (broadcasts while it is down are refused, not lost), so the loss may be 0.
    expect(Object.keys(r.lossByCause ?? {}).filter((c) => c !== 'offline_nothing_to_resume'), JSON.stringify(r.lossByCause)).toEqual([]);
    expect(r.lossByCause?.offline_nothing_to_resume ?? 0).toBe(r.lostDeliveries);
  });

  it('a --url target without a configured restart is refused before anything starts', () => {
    const prev = { c: process.env.AVALANCHE_RESTART_COMMAND, h: process.env.AVALANCHE_RESTART_HOOK_URL };
    delete process.env.AVALANCHE_RESTART_COMMAND;
    delete process.env.AVALANCHE_RESTART_HOOK_URL;
    try {
      expect(() => parseJitterOptions({ values: values({ url: 'http://127.0.0.1:9' }), env: {}, origin: 'CLI' })).toThrow(expect.objectContaining({ code: 'RR_ERR_WEATHER_NEEDS_RESTART' }));
      // The same weather without deploy needs no restart.
      expect(() => parseJitterOptions({ values: values({ url: 'http://127.0.0.1:9', weather: 'good-wifi:100' }), env: {}, origin: 'CLI' })).not.toThrow();
    } finally {
      if (prev.c !== undefined) process.env.AVALANCHE_RESTART_COMMAND = prev.c;
      if (prev.h !== undefined) process.env.AVALANCHE_RESTART_HOOK_URL = prev.h;
    }
  });

  it('a restart command that fails makes the run invalid: RESTART_FAILED, with its reason', { timeout: 120_000 }, async () => {
    const prev = process.env.AVALANCHE_RESTART_COMMAND;
    process.env.AVALANCHE_RESTART_COMMAND = 'echo "no such service" >&2; exit 3';
    try {
      const r = await withTarget(getTarget('ws'), undefined, async (url) => {
        const o = parseJitterOptions({ values: values({ url, clients: '4' }), env: {}, origin: 'CLI' });
        return runJitter(o, url).result;
      });
      expect(r.restartFailures).toHaveLength(1);
      expect(r.restartFailures![0]).toMatch(/exit 3.*no such service/);
      expect(r.validity.flags).toContainEqual(expect.objectContaining({ code: 'RESTART_FAILED', severity: 'fatal' }));
      expect(r.validity.valid).toBe(false);
      expect(r.chaos.timeline.find((e) => e.kind === 'restart')).toMatchObject({ applied: false, error: expect.stringMatching(/restart failed/) });
    } finally {
      if (prev === undefined) delete process.env.AVALANCHE_RESTART_COMMAND;
      else process.env.AVALANCHE_RESTART_COMMAND = prev;
    }
  });
});
