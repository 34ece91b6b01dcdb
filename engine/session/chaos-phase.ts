import { addToxics, CATALOG, planNeedsProxy, type DisruptionKind } from '../../chaos/plans/catalog.ts';
import { openProxyFleet, type ProxyFleet } from '../../chaos/plans/proxies.ts';
import type { ChaosEvent, PlanStep } from '../../chaos/plans/schedule.ts';
import { DisruptionTracker } from '../measure/disruptions.ts';
import type { DisconnectReason } from '../targets/types.ts';
import { ReboundError } from '../../lib/errors.ts';
import type { Phase, Session } from './types.ts';
import { afterOffline } from '../targets/reconnect.ts';

export interface ChaosExecutorOptions {
  steps: PlanStep[];
  kinds: DisruptionKind[];
  clients: number;
  groups: number;
  /** Offline time of a dropped manual-reconnect client before the runner reconnects it, ms. */
  offlineMs: number;
  /** Proxy group of each client (network weather deals them by condition); default client i in group i % groups. */
  groupOf?: readonly number[];
  /**
   * The target's restart, for server-event steps (weather `deploy`): resolves once the target is
   * serving again, with what went wrong when it did not. Absent: such a step cannot run.
   */
  restart?: () => Promise<{ ok: boolean; error: string | null; serverDownMs: number | null }>;
}

/**
 * Runs a seeded chaos schedule (chaos/plans/schedule.ts) against a run session: client drops on
 * the clients themselves, network disruptions on the group's proxy of the fleet, each on its own
 * timer from publishing's start. It follows every disruption to its effect (DisruptionTracker) and
 * writes what it did into `timeline`. Manual-reconnect targets are brought back here, a dropped
 * client after its offline time, one the network took down after the target's floor.
 */
export class ChaosExecutor {
  readonly tracker: DisruptionTracker;
  readonly timeline: ChaosEvent[] = [];
  readonly applied = new Set<number>();
  fleet: ProxyFleet | undefined;
  private readonly lastDrop: (ChaosEvent | undefined)[] = [];
  private t0 = 0;

  constructor(private readonly s: Session, readonly o: ChaosExecutorOptions) {
    // Before anything connects: a server event needs the runner's restart of its target.
    if (o.steps.some((st) => CATALOG[st.kind].serverEvent) && !o.restart) throw new ReboundError('RR_ERR_WEATHER_NEEDS_RESTART', 'the weather has a deploy, which restarts the target, and this run holds no target it can restart: let the runner start it, or configure AVALANCHE_RESTART_COMMAND or AVALANCHE_RESTART_HOOK_URL for a --url target', { details: { option: 'weather' } });
    this.tracker = new DisruptionTracker(o.steps, o.clients, (i) => s.up[i] === 1);
  }

  /** Open one proxy per group in front of `url` (the target's base URL) when the plan has network disruptions. */
  async openFleet(url: string, apiUrl: string | undefined, namePrefix: string): Promise<ProxyFleet | undefined> {
    if (!planNeedsProxy(this.o.kinds) && !this.o.steps.some((st) => st.scope === 'group')) return undefined;
    const u = new URL(url.replace(/^ws/, 'http'));
    this.fleet = await openProxyFleet({ apiUrl, groups: this.o.groups, upstream: `${u.hostname}:${u.port !== '' ? u.port : u.protocol === 'https:' ? 443 : 80}`, namePrefix });
    return this.fleet;
  }

  /** Client i's URL: its group's proxy when there is a fleet. */
  urlFor(i: number, direct: string): string {
    return this.fleet ? this.fleet.urlFor(this.groupOf(i)) : direct;
  }

  /** Client i's proxy group: the weather's deal, else i % groups. */
  groupOf(i: number): number {
    return this.o.groupOf?.[i] ?? i % this.o.groups;
  }

  /** Client i is subscribed (again): close its open disruption; the recovery, when this ended one. */
  onConnected(i: number, at: number, resumed: boolean, attempt: number): { kind: DisruptionKind; ms: number } | undefined {
    const rec = this.tracker.onConnected(i, at, resumed);
    if (attempt > 0) {
      const ev = this.lastDrop[i];
      if (ev && ev.reconnectedAtMs === undefined) {
        ev.reconnectedAtMs = at - this.t0;
        ev.resumed = resumed;
      }
    }
    return rec && { kind: this.o.steps[rec.step]!.kind, ms: rec.ms };
  }

  /** Client i noticed it was down (the session passes no disconnect of our own close). */
  onDisconnected(i: number, at: number, reason: DisconnectReason): void {
    this.tracker.onDisconnected(i, at);
    // Manual targets reconnect only when told: losses the network caused get the same treatment as
    // our drops, after the target's own floor (0 included: ws). A server that said not to come
    // back ('closed') is obeyed, as the library itself does.
    if (reason !== 'dropped' && reason !== 'closed' && this.s.target.reconnect === 'manual' && !this.s.stopping) void this.s.reconnect(i, afterOffline(this.s.target.offlineFloorMs));
  }

  /** Every step of the schedule, each on its own timer from `t0`; resolves when all are done. */
  start(t0: number): Promise<void>[] {
    this.t0 = t0;
    const tasks: Promise<void>[] = [];
    const byClient = new Map<number, number[]>();
    // Steps that add the same toxics to one proxy follow each other: a lift that runs late (a loaded
    // box, a slow proxy API) makes the next apply late, instead of meeting its toxic still there.
    // A weather link spell names its own toxics, so it overlaps the condition's base link.
    const tails = new Map<string, Promise<void>>();
    this.o.steps.forEach((st, idx) => {
      if (st.scope === 'client') return void byClient.set(st.target, [...(byClient.get(st.target) ?? []), idx]);
      const key = `${st.target}/${st.toxics?.map((t) => t.name).join(',') ?? st.kind}`;
      const task = this.runGroupStep(idx, tails.get(key));
      tails.set(key, task);
      tasks.push(task);
    });
    for (const [i, idxs] of byClient) tasks.push(this.driveDrops(i, idxs));
    return tasks;
  }

  private get stopped(): boolean {
    return this.s.stopping || this.s.aborted;
  }

  /** Client-side drops for client i, in order; manual targets come back after the offline time. */
  private async driveDrops(i: number, stepIdxs: number[]): Promise<void> {
    const c = this.s.clients[i]!;
    const now = () => this.s.clock.now();
    for (const idx of stepIdxs) {
      const step = this.o.steps[idx]!;
      await this.s.nap(this.t0 + step.atMs - now());
      if (this.stopped) return;
      const wasConnected = this.s.up[i] === 1;
      if (wasConnected) this.tracker.begin(idx, [i], now());
      const dropAt = now();
      const applied = wasConnected && c.drop();
      if (applied) this.s.timelines.disrupted(i, dropAt);
      const ev: ChaosEvent = { kind: 'drop', scope: 'client', target: i, plannedAtMs: step.atMs, atMs: now() - this.t0, durationMs: step.durationMs, applied };
      this.timeline.push(ev);
      this.s.events.emit('disruption', { kind: 'drop', scope: 'client', target: i, applied, atMs: ev.atMs });
      if (!applied) continue;
      this.applied.add(idx);
      this.lastDrop[i] = ev;
      if (this.s.target.reconnect === 'manual') await this.s.reconnect(i, afterOffline(this.o.offlineMs));
    }
  }

  /** A network disruption on one proxy group: apply, hold for its duration, lift. */
  private async runGroupStep(idx: number, previous: Promise<void> | undefined): Promise<void> {
    const step = this.o.steps[idx]!;
    const def = CATALOG[step.kind];
    const now = () => this.s.clock.now();
    await this.s.nap(this.t0 + step.atMs - now());
    await previous;
    const ev: ChaosEvent = { kind: step.kind, scope: 'group', target: step.target, plannedAtMs: step.atMs, atMs: now() - this.t0, durationMs: step.durationMs, applied: false };
    this.timeline.push(ev);
    const apply = def.serverEvent ? this.restartStep(ev) : step.toxics ? addToxics(...step.toxics) : def.apply;
    if (this.stopped || !this.fleet || !apply) return;
    // A restart reaches every client, whatever its proxy.
    const members: number[] = [];
    for (let i = 0; i < this.o.clients; i++) if (def.serverEvent || this.groupOf(i) === step.target) members.push(i);
    this.tracker.begin(idx, members, now());
    // A weather link shape takes no connection down: it opens no offline span (see CATALOG.link).
    const outage = !def.keepsConnections;
    if (outage) for (const i of members) if (this.s.up[i] === 1) this.s.timelines.disrupted(i, now());
    try {
      const undo = await apply(this.fleet.proxies[step.target]!);
      ev.applied = true;
      this.applied.add(idx);
      this.s.events.emit('disruption', { kind: step.kind, scope: 'group', target: step.target, applied: true, atMs: ev.atMs });
      await this.s.nap(this.t0 + step.atMs + step.durationMs - now());
      await undo();
      if (outage && !def.liftCloses) for (const i of members) this.s.timelines.lifted(i);
      ev.endedAtMs = now() - this.t0;
    } catch (err) {
      ev.error = (err as Error).message;
    }
  }

  /** A server event as a step's apply: the target restarts during it (the proxy is not touched); the lift has nothing left to undo. */
  private restartStep(ev: ChaosEvent): () => Promise<() => Promise<void>> {
    const restart = this.o.restart!; // the constructor refused server events without it
    return async () => {
      const r = await restart();
      ev.serverDownMs = r.serverDownMs;
      if (!r.ok) throw new ReboundError('RR_ERR_RESTART_FAILED', `the target's restart failed: ${r.error ?? 'no reason given'}`);
      return async () => {};
    };
  }

  async close(): Promise<void> {
    await this.fleet?.close();
  }
}

/**
 * The schedule as a phase of the run (engine/session/types.ts): every step on its own timer from
 * `t0`, done when the last is lifted. It runs alongside publishing or listening, so it emits no
 * phase event of its own (each step is a `disruption` event).
 */
export function chaosPhase(ex: ChaosExecutor, t0: number): Phase<void> {
  return {
    name: 'chaos',
    validate() {
      if (ex.o.steps.some((st) => st.scope === 'group') && !ex.fleet) throw new ReboundError('RR_ERR_OPTION_INVALID', 'the plan has network disruptions but no proxy fleet was opened (openFleet first)');
    },
    async run() {
      await Promise.all(ex.start(t0));
    },
  };
}
