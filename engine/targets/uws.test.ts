/**
 * `uws` as a target: in the default local set where uWS's binary loads, driven by the ws adapter
 * unchanged (a small seeded jitter run: at-most-once, nothing replayed); where it does not load
 * (the loader pointed at a missing module) it is left out with the reason, and naming it fails
 * with RR_ERR_TARGET_UNAVAILABLE while every other target still runs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { uwsAvailability } from '../../services/uws/load.ts';
import { withTarget } from '../measure/local-target.ts';
import { parseJitterOptions } from '../../runners/jitter/options.ts';
import { runJitter } from '../../runners/jitter/run.ts';
import { getTarget, localTargets, unavailableTargets } from './index.ts';

const saved = process.env.UWS_MODULE;
afterEach(() => {
  if (saved === undefined) delete process.env.UWS_MODULE;
  else process.env.UWS_MODULE = saved;
});

describe('uws target', () => {
  it.skipIf(!uwsAvailability().available)('is a local target of its own, next to ws, and runs a seeded jitter test through the ws adapter', async () => {
    expect(localTargets().map((t) => t.name)).toEqual(expect.arrayContaining(['ws', 'uws']));
    expect(unavailableTargets()).toEqual([]);
    const t = getTarget('uws');
    expect(t).toMatchObject({ reconnect: 'manual', replays: false, service: { name: 'uws' } });
    const opts = parseJitterOptions({ values: { clients: '8', msgs: '80', interval: '100', jitter: '1', 'jitter-ms': '600', ramp: '200', settle: '3000', seed: '2727', target: 'uws' }, origin: 'test' });
    const r = await withTarget(t, undefined, (url) => runJitter(opts, url).result);
    expect(r.validity.valid, JSON.stringify(r.validity)).toBe(true);
    expect(r.published).toBe(80);
    expect(r.jitterEvents).toBeGreaterThan(0);
    // At-most-once: drops cost messages, and nothing arrives twice.
    expect(r.receivedDeliveries).toBeLessThan(r.expectedDeliveries);
    expect(r.receivedDeliveries).toBeGreaterThan(0);
  });

  it('where the binary does not load: left out of the default set with the reason; naming it fails, others still run', async () => {
    process.env.UWS_MODULE = '/nonexistent/uWebSockets.js';
    const names = localTargets().map((t) => t.name);
    expect(names).not.toContain('uws');
    expect(names).toEqual(expect.arrayContaining(['ws', 'socketio', 'replay']));
    expect(unavailableTargets()).toEqual([{ name: 'uws', reason: expect.stringMatching(/^uWebSockets\.js not installed here \(\/nonexistent\/uWebSockets\.js\)/) }]);
    await expect(withTarget(getTarget('uws'), undefined, async () => 1)).rejects.toMatchObject({ code: 'RR_ERR_TARGET_UNAVAILABLE' });
    expect(await withTarget(getTarget('ws'), undefined, async (url) => (await fetch(`${url}/health`)).status)).toBe(200);
  });
});
