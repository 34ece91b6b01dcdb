import type { ToxicSpec } from '../toxiproxy/client.ts';
import type { DisruptionKind } from '../plans/catalog.ts';

/**
 * Network weather: named real-world conditions (issue 40). Each is a link shape held on its
 * clients' proxy for the whole drop window (latency, jitter, bandwidth as Toxiproxy toxics) plus
 * seeded spells: a worse link for a while, or an outage taken from the plan catalog (blackhole,
 * reset, partition) so a condition's outages are the plans' outages, lifted the same way.
 * Figures and their sources: docs/chaos-plans.md, "Network weather".
 *
 * Toxiproxy has no packet-loss toxic, and over TCP a lost segment is never lost to the
 * application: it arrives one retransmission timeout late (Linux's minimum RTO is 200 ms). So a
 * preset's loss rate p becomes latency jitter: a share p of the bytes would arrive up to ~RTO
 * late, which a `jitter` of about RTO x min(1, 10p) approximates (0.2 % -> 4 ms, 1 % -> 20 ms,
 * 10 % -> 200 ms), and heavy loss shows as a slicer holding the stream in small, delayed pieces.
 */
// Appended, never reordered: each condition's seeded stream is salted by its index here.
export const CONDITIONS = ['good-wifi', 'congested-wifi', 'lte', '3g', 'mobile-handover', 'subway', 'laptop-sleep', 'deploy'] as const;
export type ConditionName = (typeof CONDITIONS)[number];

/** A link: one-way delays (ms), their jitter, and bandwidth (KB/s, Toxiproxy's unit; absent = unlimited). */
export interface LinkShape {
  downMs: number;
  downJitterMs: number;
  upMs: number;
  upJitterMs: number;
  downKBps?: number;
  upKBps?: number;
  /** Deliver downstream bytes in pieces of about this many bytes, each held this long (µs): heavy loss. */
  slice?: { bytes: number; delayUs: number };
}

/** A recurring episode of a condition. Times are ms at time scale 1. */
export interface Spell {
  /**
   * `link`: `link` (a worse link) on top of the base; `restart`: the target itself restarts, once
   * for the whole run (a server event: every client sees it); otherwise an outage from the plan catalog.
   */
  kind: Extract<DisruptionKind, 'link' | 'blackhole' | 'reset' | 'partition' | 'restart'>;
  link?: LinkShape;
  /** First one starts U(first) after publishing starts. */
  firstMs: readonly [number, number];
  /** Each lasts U(lasts). */
  lastsMs: readonly [number, number];
  /** The next one starts U(gap) after the previous one ended; absent = once per run. */
  gapMs?: readonly [number, number];
}

export interface ConditionDef {
  description: string;
  /** What the figures come from (the full numbers are in docs/chaos-plans.md). */
  source: string;
  base: LinkShape;
  spells: readonly Spell[];
}

/**
 * Default session/history lifetimes of the local targets this must outlive: the replay server's
 * sessionTtlSec and historyTtlSec (300 s), Socket.IO CSR's maxDisconnectionDuration (120 s).
 * laptop-sleep sleeps 1.2 x the longest, so its resume outcome shows expiry.
 */
export const OUTLIVE_MS = 300_000;
export const SLEEP_MS = Math.round(OUTLIVE_MS * 1.2);

const WIFI: LinkShape = { downMs: 5, downJitterMs: 3, upMs: 5, upJitterMs: 3 };
const LTE: LinkShape = { downMs: 35, downJitterMs: 10, upMs: 35, upJitterMs: 15, downKBps: 1500, upKBps: 1500 };
const G3: LinkShape = { downMs: 150, downJitterMs: 50, upMs: 150, upJitterMs: 50, downKBps: 200, upKBps: 96 };

export const WEATHER: Readonly<Record<ConditionName, ConditionDef>> = Object.freeze({
  'good-wifi': {
    description: 'home Wi-Fi on a fast line: ~10 ms round trip, no loss; now and then a few seconds of interference (+40 ms ± 30)',
    source: 'WebPageTest Cable/FIOS profiles (28 ms / 4 ms RTT)',
    base: WIFI,
    spells: [{ kind: 'link', link: { downMs: 40, downJitterMs: 30, upMs: 20, upJitterMs: 15 }, firstMs: [5000, 30_000], lastsMs: [1000, 4000], gapMs: [20_000, 60_000] }],
  },
  'congested-wifi': {
    description: 'a shared café/airport Wi-Fi: 100 ms ± 80 each way and 1 % loss (as jitter), 250 KB/s down; congestion bursts of 400 ms ± 300 in sliced pieces',
    source: 'Loadero "3.5G/HSPDA" jitter and loss, Lighthouse throttling guide on request vs packet throttling',
    base: { downMs: 100, downJitterMs: 80, upMs: 60, upJitterMs: 40, downKBps: 250, upKBps: 125 },
    spells: [{ kind: 'link', link: { downMs: 400, downJitterMs: 300, upMs: 200, upJitterMs: 150, slice: { bytes: 64, delayUs: 20_000 } }, firstMs: [3000, 15_000], lastsMs: [2000, 8000], gapMs: [10_000, 30_000] }],
  },
  lte: {
    description: 'LTE: 70 ms round trip, 12 Mbit/s both ways (1.5 MB/s), 0.2 % loss (as 10-15 ms jitter); cell-edge spells at 3G figures',
    source: 'WebPageTest LTE (12/12 Mbps, 70 ms RTT); Loadero 4G (0.2 % loss, 5-15 ms jitter)',
    base: LTE,
    spells: [{ kind: 'link', link: G3, firstMs: [10_000, 40_000], lastsMs: [3000, 10_000], gapMs: [30_000, 90_000] }],
  },
  '3g': {
    description: '3G: 300 ms round trip, 1.6 Mbit/s down (200 KB/s), 768 kbit/s up (96 KB/s), 0.5 % loss (as 50 ms jitter); weak-signal spells at Slow 3G (400 ms each way, 50 KB/s)',
    source: 'WebPageTest Mobile 3G (1.6 Mbps / 768 Kbps, 300 ms RTT) and 3G Slow (400 Kbps, 400 ms); Loadero 3G (0.5 % loss, 50 ms jitter)',
    base: G3,
    spells: [{ kind: 'link', link: { downMs: 400, downJitterMs: 100, upMs: 400, upJitterMs: 100, downKBps: 50, upKBps: 50 }, firstMs: [5000, 30_000], lastsMs: [3000, 12_000], gapMs: [20_000, 60_000] }],
  },
  'mobile-handover': {
    description: 'LTE while moving between cells: every 20-40 s a handover resets every connection (TCP RST) and refuses new ones for 1-3 s',
    source: 'LTE link as `lte`; 3GPP handover interruption is tens of ms, but a change of IP/NAT binding resets TCP and the re-attach takes seconds',
    base: LTE,
    spells: [{ kind: 'reset', firstMs: [5000, 20_000], lastsMs: [1000, 3000], gapMs: [20_000, 40_000] }],
  },
  subway: {
    description: '3G between stations; every 60-120 s a tunnel holds every byte both ways (blackhole) for 20-60 s, then the surfacing closes the dead connections',
    source: '3G link as `3g`; tunnel spans from metro inter-station times (1-3 min between stations, tens of seconds underground without coverage)',
    base: G3,
    spells: [{ kind: 'blackhole', firstMs: [5000, 60_000], lastsMs: [20_000, 60_000], gapMs: [60_000, 120_000] }],
  },
  'laptop-sleep': {
    description: `good Wi-Fi, then the lid closes: once per run the link holds every byte (blackhole) for ${SLEEP_MS / 60_000} min, longer than the replay server's session and history TTL (300 s) and Socket.IO CSR's maxDisconnectionDuration (120 s); on wake the dead connections close`,
    source: 'Wi-Fi link as `good-wifi`; sleep length from the targets\' default session lifetimes',
    base: WIFI,
    spells: [{ kind: 'blackhole', firstMs: [5000, 15_000], lastsMs: [SLEEP_MS, SLEEP_MS] }],
  },
  deploy: {
    description: 'the server is redeployed once: the target restarts (SIGTERM, then started again on its port: a graceful stop plus a start), so its memory (sessions, history, a memory broker) starts empty. A server event: every client in the run sees it, whatever its own condition; the clients dealt to deploy have Wi-Fi and nothing else, so their row shows the deploy alone',
    source: "Wi-Fi link as `good-wifi`; the restart is avalanche's `term` (engine/measure/restart.ts), or the operator's restart command or hook for a --url target",
    base: WIFI,
    spells: [{ kind: 'restart', firstMs: [10_000, 30_000], lastsMs: [0, 0] }],
  },
});

/** The toxics of a link, named with `tag` so a spell's stack on the base's without clashing on one proxy. */
export function linkToxics(l: LinkShape, tag: string): (ToxicSpec & { name: string })[] {
  const out: (ToxicSpec & { name: string })[] = [
    { type: 'latency', name: `rr_w_${tag}_lat_down`, stream: 'downstream', attributes: { latency: l.downMs, jitter: l.downJitterMs } },
    { type: 'latency', name: `rr_w_${tag}_lat_up`, stream: 'upstream', attributes: { latency: l.upMs, jitter: l.upJitterMs } },
  ];
  if (l.downKBps !== undefined) out.push({ type: 'bandwidth', name: `rr_w_${tag}_bw_down`, stream: 'downstream', attributes: { rate: l.downKBps } });
  if (l.upKBps !== undefined) out.push({ type: 'bandwidth', name: `rr_w_${tag}_bw_up`, stream: 'upstream', attributes: { rate: l.upKBps } });
  if (l.slice) out.push({ type: 'slicer', name: `rr_w_${tag}_slice`, stream: 'downstream', attributes: { average_size: l.slice.bytes, size_variation: Math.floor(l.slice.bytes / 2), delay: l.slice.delayUs } });
  return out;
}
