import { ReboundError } from '../../lib/errors.ts';
import type { ChaosProxyHandle, ToxicSpec } from '../toxiproxy/client.ts';

/** The disruption kinds a plan can combine. */
// Appended, never reordered: each kind's schedule stream is salted by its index here.
export const DISRUPTIONS = ['drop', 'flaky', 'blackhole', 'partition', 'slow-consumer', 'reset', 'cutoff', 'link', 'restart'] as const;
export type DisruptionKind = (typeof DISRUPTIONS)[number];

/** One disruption kind (CATALOG is keyed by kind). */
export interface DisruptionDefinition {
  description: string;
  /** 'client': one client at a time, from the runner; 'group': every client behind one proxy. */
  scope: 'client' | 'group';
  /** How long one disruption lasts by default, ms (drops: the offline time). */
  defaultDurationMs: number;
  /**
   * Start the disruption on a proxy; resolves to its undo. Undo follows Toxiproxy's semantics,
   * e.g. removing a timeout toxic closes the held connections.
   */
  apply?: (proxy: ChaosProxyHandle) => Promise<() => Promise<void>>;
  /** Comes with `--weather` (chaos/weather), never a plan of its own. */
  weatherOnly?: true;
  /**
   * It never takes a connection down by itself (a weather link shape), so its steps open no
   * offline span (a base link held for the whole window would otherwise swallow every later
   * outage's span).
   */
  keepsConnections?: true;
  /**
   * Lifting it closes every connection it held (a `timeout` toxic's removal), so a client that
   * had not noticed yet is told by the lift itself, after the lift's call returns: its offline
   * span stays open for that close instead of being dropped as "never noticed".
   */
  liftCloses?: true;
  /**
   * Not the network but the server: the target itself restarts (the runner's restart of the
   * target it holds, engine/measure/restart.ts), so it reaches every client whatever its proxy,
   * and needs no proxy. The executor runs it through the restart the runner gives it.
   */
  serverEvent?: true;
}

/**
 * The `cutoff` plan's numbers: 1 KB is a handful of broadcasts, so a live connection is cut within
 * seconds and a reconnect is cut again after its handshake and catch-up; the 1 s late close is
 * long enough to show in detect times, short against the plan.
 */
export const CUTOFF = Object.freeze({ bytes: 1024, closeDelayMs: 1000 });

/**
 * An apply that adds the toxics in order. Its undo removes them in reverse order of adding them.
 * Toxiproxy 2.12 needs that order: after removing a toxic whose stage has already closed (a
 * `limit_data` that hit its limit), its links keep a stale stage index, so the next removal
 * misses its toxic and e.g. a `slow_close` holding the close back still waits its full delay
 * after the plan lifted it. Newest first, every removal finds its own stage, through either proxy.
 */
export const addToxics = (...specs: (ToxicSpec & { name: string })[]) => async (proxy: ChaosProxyHandle) => {
  for (const s of specs) await proxy.addToxic(s);
  return async () => {
    for (const s of [...specs].reverse()) await proxy.removeToxic(s.name);
  };
};

/** The blackhole's two toxics; the upstream one stays on the proxy at toxicity 0 between blackholes (see liftBlackhole). */
export const BLACKHOLE = Object.freeze({ down: 'rr_blackhole_down', up: 'rr_blackhole_up' });

/** Turn a toxic parked at toxicity 0 back on (re-rolled at 1 on every link, live ones too), or add it the first time. */
async function enableOrAdd(p: ChaosProxyHandle, spec: ToxicSpec & { name: string }): Promise<void> {
  try {
    await p.updateToxic(spec.name, { toxicity: 1 });
  } catch (err) {
    if (!(err instanceof ReboundError) || err.details?.status !== 404) throw err;
    await p.addToxic(spec);
  }
}

/**
 * Lifting the blackhole closes every held connection in one step, so a client that reconnects
 * the instant it sees the close is never caught by the rest of the lift. Removing a `timeout`
 * toxic closes every connection it is in the chain of, whatever its toxicity roll (Toxiproxy's
 * Cleanup; Rebound's proxy does the same), so two removals are two closing steps: a client
 * reconnecting between them (ws does within ~5 ms) had its handshake held by the toxic still
 * in place and was closed again by the second removal, coming back one retry later, at random
 * (`npm run bench:proxy-lift-race`, 10 lifts of 12 clients that reconnect at once: 72 of 120
 * caught through Rebound's proxy, 83 of 120 through Toxiproxy 2.12; with this lift 0 of 120
 * through either; docs/results/proxy-blackhole-lift.json).
 * So: first the upstream toxic goes to toxicity 0 (closes nothing; a new connection rolls it as
 * a pass-through), then removing the downstream one closes everything at once. For the few ms
 * between the two calls a held connection's client bytes reach the server again; nothing reaches
 * the client before the close. The upstream toxic is never removed while clients can connect
 * (that would be a second closing step); the next blackhole turns it back on.
 */
const liftBlackhole = (p: ChaosProxyHandle) => async () => {
  await p.updateToxic(BLACKHOLE.up, { toxicity: 0 });
  await p.removeToxic(BLACKHOLE.down);
};

/**
 * What each disruption does. Names of toxics are prefixed `rr_` so a shared real Toxiproxy shows
 * whose they are.
 */
export const CATALOG: Readonly<Record<DisruptionKind, DisruptionDefinition>> = Object.freeze({
  drop: { scope: 'client', defaultDurationMs: 1000, description: 'client-side force close of the TCP socket (no close handshake); manual targets stay offline max(duration, floor)' },
  flaky: {
    scope: 'group',
    defaultDurationMs: 10_000,
    description: 'bad network: 150 ms ± 100 ms latency downstream, 50 ms upstream, and frames sliced into ~64-byte packets',
    apply: addToxics(
      { type: 'latency', name: 'rr_flaky_latency_down', stream: 'downstream', attributes: { latency: 150, jitter: 100 } },
      { type: 'latency', name: 'rr_flaky_latency_up', stream: 'upstream', attributes: { latency: 50, jitter: 25 } },
      { type: 'slicer', name: 'rr_flaky_slicer', stream: 'downstream', attributes: { average_size: 64, size_variation: 32, delay: 200 } },
    ),
  },
  blackhole: {
    scope: 'group',
    defaultDurationMs: 50_000,
    liftCloses: true,
    description: 'half-open connections: a timeout toxic (timeout 0) holds every byte both ways; lifting it closes the connections, all in one step. Measures how long each stack takes to notice',
    async apply(p) {
      await p.addToxic({ type: 'timeout', name: BLACKHOLE.down, stream: 'downstream', attributes: { timeout: 0 } });
      await enableOrAdd(p, { type: 'timeout', name: BLACKHOLE.up, stream: 'upstream', attributes: { timeout: 0 } });
      return liftBlackhole(p);
    },
  },
  partition: {
    scope: 'group',
    defaultDurationMs: 5000,
    description: 'the proxy is disabled: every connection closes at once and reconnects are refused until it is enabled (mass disconnect, reconnect storm)',
    async apply(p) {
      await p.setEnabled(false);
      return () => p.setEnabled(true);
    },
  },
  'slow-consumer': {
    scope: 'group',
    defaultDurationMs: 10_000,
    description: 'downstream bandwidth limited to 1 KB/s: the server must buffer or shed',
    apply: addToxics({ type: 'bandwidth', name: 'rr_slow_consumer', stream: 'downstream', attributes: { rate: 1 } }),
  },
  reset: {
    scope: 'group',
    defaultDurationMs: 1000,
    description: 'reset_peer: every connection gets a TCP RST; new ones too while it lasts',
    apply: addToxics({ type: 'reset_peer', name: 'rr_reset', stream: 'downstream', attributes: { timeout: 0 } }),
  },
  cutoff: {
    scope: 'group',
    defaultDurationMs: 5000,
    description: `a middlebox cutting streams: every connection, and every reconnect while it lasts, is closed after ${CUTOFF.bytes} more bytes downstream (limit_data), and the close reaches the client ${CUTOFF.closeDelayMs} ms late (slow_close)`,
    // Chain order matters: limit_data ends the stream, then slow_close holds that close back.
    apply: addToxics(
      { type: 'limit_data', name: 'rr_cutoff_limit', stream: 'downstream', attributes: { bytes: CUTOFF.bytes } },
      { type: 'slow_close', name: 'rr_cutoff_slow_close', stream: 'downstream', attributes: { delay: CUTOFF.closeDelayMs } },
    ),
  },
  link: {
    scope: 'group',
    defaultDurationMs: 10_000,
    weatherOnly: true,
    keepsConnections: true,
    description: "a weather condition's link shape (latency, jitter, bandwidth, slicing), toxics given by the condition (chaos/weather/conditions.ts); not a plan of its own",
  },
  restart: {
    scope: 'group',
    defaultDurationMs: 0,
    weatherOnly: true,
    serverEvent: true,
    description: "the target restarts (weather `deploy`): a target the runner started gets SIGTERM and is started again on its port; one at --url is restarted by the operator's AVALANCHE_RESTART_COMMAND or _HOOK_URL. Every client sees it, whatever its proxy",
  },
});

/** The kinds `--plan` takes (weather-only kinds come with `--weather`). */
export const PLAN_KINDS = DISRUPTIONS.filter((k) => !CATALOG[k].weatherOnly);

/** A plan is one disruption or several joined by `+`, e.g. `drop+flaky`. */
export function parsePlan(name: string): DisruptionKind[] {
  const kinds: DisruptionKind[] = [];
  for (const p of name.split('+').map((s) => s.trim())) {
    if (!(PLAN_KINDS as readonly string[]).includes(p)) {
      throw new ReboundError('RR_ERR_OPTION_INVALID', `unknown chaos plan "${p}"; plans: ${PLAN_KINDS.join(', ')} (combine with +)`, { details: { option: 'plan' } });
    }
    if (!kinds.includes(p as DisruptionKind)) kinds.push(p as DisruptionKind);
  }
  return kinds;
}

export const planNeedsProxy = (kinds: readonly DisruptionKind[]) => kinds.some((k) => CATALOG[k].scope === 'group');
