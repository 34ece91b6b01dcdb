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
const SPEC = 'good-wifi:13,congested-wifi:13,lte:13,3g:13,mobile-handover:12,subway:12,laptop-sleep:12,deploy:12';
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

describe('network weather on a real proxy', () => {
  let tp: ToxiproxyTarget;
  afterAll(async () => {
    await tp?.close();
  });
  const run = (async () => {
    tp = await startToxiproxyTarget();
    const watch = watchProxies(tp.url);
    const o = parseJitterOptions({ values: { target: 'ws', clients: '16', msgs: '50', interval: '200', jitter: '0', weather: SPEC, 'weather-scale': String(SCALE), seed: '11', settle: '15000', 'toxiproxy-url': tp.url }, env: {}, origin: 'CLI' });
    const r = await withTarget(getTarget('ws'), undefined, (url) => runJitter(o, url).result);
    await watch.stop();
    return { r, seen: watch.seen };
  })();

  it('every step happens when the seed says, on its own condition\'s proxies, and each proxy held its condition\'s toxics', { timeout: 120_000 }, async () => {
    const { r, seen } = await run;
    const plan = planWeather({ shares: parseWeather(SPEC), seed: r.seed, clients: 16, windowMs: 50 * 200, scale: SCALE });
    // The executed time line is the seeded one, step for step, each applied close to its planned time.
    const key = (s: { kind: string; target: number; plannedAtMs?: number; atMs: number }) => `${s.kind}/g${s.target}@${s.plannedAtMs ?? s.atMs}`;
    expect(r.chaos.timeline.map(key).sort()).toEqual(plan.steps.map(key).sort());
    for (const ev of r.chaos.timeline) {
      expect(ev.applied, key(ev)).toBe(true);
      expect(ev.atMs - ev.plannedAtMs, key(ev)).toBeLessThan(1000);
      expect(ev.atMs - ev.plannedAtMs, key(ev)).toBeGreaterThanOrEqual(-1);
    }
    expect(r.chaos.groups).toBe(16); // two proxies per condition (two clients each)
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

  it('the offline spans land on the right clients: sleepers offline the whole (scaled) sleep, tunnels and deploys cut, good Wi-Fi never', { timeout: 120_000 }, async () => {
    const { r } = await run;
    const cond = (n: string) => r.weather!.conditions.find((c) => c.condition === n)!;
    expect(r.weather).toMatchObject({ spec: SPEC, scale: SCALE });
    expect(r.weather!.conditions.map((c) => c.clients)).toEqual(new Array(8).fill(2));
    const kind = (n: string, k: string) => cond(n).disruptions.find((d) => d.kind === k);
    const sleep = kind('laptop-sleep', 'blackhole')!;
    expect(sleep.affectedClients).toBe(2);
    expect(sleep.recoverMs.count).toBe(2);
    expect(sleep.recoverMs.p50).toBeGreaterThanOrEqual(SLEEP_MS * SCALE - 50);
    expect(kind('subway', 'blackhole')!.recoverMs.count).toBeGreaterThanOrEqual(2);
    expect(kind('deploy', 'partition')!.detectMs.count).toBe(2);
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
