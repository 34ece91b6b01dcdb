import type { DeliveryLedger } from './ledger.ts';

/**
 * Per-second series of one run, small enough to travel in the result JSON (a few numbers per
 * second of run) and exact: reports downsample only for drawing. Times are relative to when
 * publishing began, like the chaos timeline's `atMs`; the ramp shows as negative seconds.
 */
export interface RunSeries {
  bucketMs: number;
  /** Start of bucket 0, ms relative to the start of publishing: a whole number of buckets, negative (the ramp). */
  startMs: number;
  /** Clients connected at the end of each bucket. */
  connected: number[];
  /** Fewest clients connected at any moment of each bucket (a one-second dip still shows). */
  connectedMin: number[];
  /** First deliveries (not duplicates) that arrived in each bucket. */
  arrivals: number[];
  /** Messages handed to the publisher in each bucket. */
  published: number[];
  /** Of the messages published in each bucket, % of (clients x messages) delivered by the end; null where nothing was published. */
  deliveredPctByPublish: (number | null)[];
  /** Per disruption kind: how long each affected client took to be subscribed again (quantiles p0..p100, 101 values, ms). */
  recovery: { kind: string; recovered: number; quantilesMs: number[] }[];
}

/** A day of one-second buckets: the bound on any run's series length. */
const MAX_BUCKETS = 86_400;

/** Records a RunSeries from the runner's own events. Every hook is O(1) except `finish`. */
export class SeriesRecorder {
  readonly bucketMs = 1000;
  private origin = 0;
  private publishAt = NaN;
  private current = 0;
  private readonly up: Uint8Array;
  private readonly connected: number[] = [];
  private readonly connectedMin: number[] = [];
  private readonly arrivals: number[] = [];
  private readonly published: number[] = [];
  private readonly sentBucket: number[] = [];
  private readonly recoveries = new Map<string, number[]>();

  constructor(clients: number) {
    this.up = new Uint8Array(clients);
  }

  /** Bucket 0 starts here (the ramp's start). */
  start(now: number): void {
    this.origin = now;
  }

  /**
   * Realign bucket boundaries to whole seconds since publishing began, so each chaos event falls in
   * the bucket its series shows. Only ramp connects were recorded before; they move by under a bucket.
   */
  publishingStarted(now: number): void {
    this.publishAt = now;
    this.origin = now - Math.ceil((now - this.origin) / this.bucketMs) * this.bucketMs;
  }

  private bucket(now: number): number {
    return Math.min(MAX_BUCKETS - 1, Math.max(0, Math.floor((now - this.origin) / this.bucketMs)));
  }

  /** Carry the connected count forward up to bucket k (quiet seconds keep the last value). */
  private fill(k: number): void {
    for (let j = this.connected.length; j <= k; j++) {
      this.connected.push(this.current);
      this.connectedMin.push(this.current);
    }
  }

  private setConnected(i: number, on: 0 | 1, now: number): void {
    if (this.up[i] === on) return;
    const k = this.bucket(now);
    this.fill(k);
    this.up[i] = on;
    this.current += on ? 1 : -1;
    this.connected[k] = this.current;
    if (this.current < this.connectedMin[k]!) this.connectedMin[k] = this.current;
  }

  /** Client i is subscribed again; `recovery` is the tracker's time from the disruption's start, when it was one. */
  connectedAt(i: number, now: number, recovery?: { kind: string; ms: number }): void {
    this.setConnected(i, 1, now);
    if (recovery) entryOf(this.recoveries, recovery.kind, () => []).push(recovery.ms);
  }

  disconnectedAt(i: number, now: number): void {
    this.setConnected(i, 0, now);
  }

  arrival(at: number): void {
    const k = this.bucket(at);
    while (this.arrivals.length <= k) this.arrivals.push(0);
    this.arrivals[k]!++;
  }

  sent(seq: number, at: number): void {
    const k = this.bucket(at);
    while (this.published.length <= k) this.published.push(0);
    this.published[k]!++;
    this.sentBucket[seq] = k;
  }

  /** Close the series at `now`; delivered-by-publish-time comes from the ledger, the one source of delivery truth. */
  finish(now: number, ledger: DeliveryLedger): RunSeries {
    const last = Math.max(this.bucket(now), this.arrivals.length - 1, this.published.length - 1);
    this.fill(last);
    const pad = (a: number[]) => a.concat(new Array(Math.max(0, last + 1 - a.length)).fill(0));
    const exp = new Array<number>(last + 1).fill(0);
    const got = new Array<number>(last + 1).fill(0);
    for (let seq = 1; seq <= ledger.messages; seq++) {
      const k = this.sentBucket[seq];
      if (k === undefined) continue;
      exp[k]! += ledger.clients;
      for (let c = 0; c < ledger.clients; c++) if (ledger.latencyOf(c, seq) !== undefined) got[k]!++;
    }
    return {
      bucketMs: this.bucketMs,
      startMs: Number.isNaN(this.publishAt) ? 0 : this.origin - this.publishAt,
      connected: this.connected.slice(0, last + 1),
      connectedMin: this.connectedMin.slice(0, last + 1),
      arrivals: pad(this.arrivals),
      published: pad(this.published),
      deliveredPctByPublish: exp.map((e, k) => (e > 0 ? Math.round((got[k]! / e) * 10000) / 100 : null)),
      recovery: [...this.recoveries].map(([kind, ms]) => ({ kind, recovered: ms.length, quantilesMs: quantiles(ms) })),
    };
  }
}

/** `map`'s entry for `key`, made and stored first when it has none. */
export function entryOf<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) map.set(key, (v = make()));
  return v;
}

/** 101 quantiles (p0..p100) by nearest rank: enough to draw a CDF exactly at 1% resolution. */
export function quantiles(values: readonly number[]): number[] {
  if (values.length === 0) return [];
  const s = Float64Array.from(values).sort();
  return Array.from({ length: 101 }, (_, p) => Math.round(s[Math.min(s.length - 1, Math.floor(((s.length - 1) * p) / 100))]!));
}
