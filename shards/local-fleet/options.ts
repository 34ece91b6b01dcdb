import type { OptionTable, OptionValues } from '../../lib/options.ts';

/** `npm run bench:idle:local-fleet` options (CLI flags; no env: every figure's command line says it all). */
export const LOCAL_FLEET_OPTIONS = {
  target: { type: 'enum', values: ['replay', 'ws', 'socketio'], default: 'replay', doc: 'target started locally: replay (node:cluster workers, as many as the fd limit needs), ws or socketio (one process each)' },
  n: { type: 'int', default: 10_000, min: 1, max: 2_000_000, aliases: ['clients'], doc: 'idle connections in all' },
  shards: { type: 'int', default: 0, min: 0, max: 200, doc: 'local runner services (0 = max(3, ceil(n / 50,000)))' },
  pingInterval: { type: 'int', default: 0, min: 0, max: 3600, doc: "replay: the ping period, s, the clients ask for with the cable URL's ?pi=; the target is started with --max-ping-interval-sec max(30, this) so the clamp allows it; 0 = the server's default (3 s)" },
  ramp: { type: 'int', default: 1000, min: 1, max: 100_000, doc: 'connects per second over the whole fleet (each shard ramps at ramp / shards, all at once)' },
  hold: { type: 'number', default: 120, min: 0, max: 86_400, doc: 'seconds every shard holds its connections once all are subscribed' },
  minFreeMib: { type: 'int', default: 2048, min: 0, max: 1_048_576, doc: 'memory floor: when MemAvailable falls below this (MiB) the ramp is aborted (MEMORY_FLOOR), everything closed, and how far it got reported' },
  perWorker: { type: 'int', default: 0, min: 0, max: 19_000, doc: "clients per runner worker process (0 = the idle runner's default: 75% of the fd limit, at most 15,000)" },
  targetPerProcess: { type: 'int', default: 16_000, min: 100, max: 19_500, doc: 'replay: connections per target worker process (the 20,000-file limit minus room for its own files); workers = ceil(n / this), at most 64' },
  targetWorkers: { type: 'int', default: 0, min: 0, max: 64, doc: 'replay: target worker processes (0 = from targetPerProcess)' },
  targetSemiSpaceMib: { type: 'int', default: 1, min: 0, max: 64, doc: "V8's --max-semi-space-size (MiB) for the target's processes (node:cluster workers inherit it), as the idle runner's workers run with 1; 0 = node's default (up to 16 MiB per semi-space)" },
  sched: { type: 'enum', values: ['none', 'rr'], default: 'none', doc: "replay with workers: node:cluster's scheduling (NODE_CLUSTER_SCHED_POLICY). none: every worker accepts from the shared socket itself; rr: the primary accepts and hands each connection over (node's default). With rr and 63 workers the primary stopped accepting at ~26,600 connections (accept queue full, 4,097 of 4,096)" },
  addresses: { type: 'int', default: 200, min: 1, max: 254, doc: 'source addresses 127.0.0.1..N the clients are dealt over (each has ~28K ephemeral ports)' },
  connectTimeoutMs: { type: 'int', default: 20_000, min: 100, max: 600_000, doc: 'per-connection time to subscribe before it counts as failed' },
  stream: { type: 'string', default: 'idle-probe', maxLength: 200, doc: 'stream every connection subscribes to (the coordinator suffixes it per shard)' },
  milestones: { type: 'string', default: '100000,250000,500000', pattern: /^\d+(,\d+)*$/, doc: 'connection counts the cost table has a row for (plus the largest N reached)' },
  bundle: { type: 'bool', default: true, doc: 'run every process from an esbuild bundle under plain node (no tsx loader per process); --no-bundle runs the .ts entries through tsx' },
  pollMs: { type: 'int', default: 2000, min: 200, max: 60_000, doc: "coordinator's job poll period, ms" },
  out: { type: 'string', default: '', doc: 'output folder (default results/local-fleet-<target>-<n>-<time>)' },
  json: { type: 'bool', default: false, doc: 'print the fleet result JSON on stdout instead of the summary' },
} as const satisfies OptionTable;

export type LocalFleetOptions = OptionValues<typeof LOCAL_FLEET_OPTIONS>;

export const shardsFor = (o: Pick<LocalFleetOptions, 'shards' | 'n'>) => o.shards || Math.max(3, Math.ceil(o.n / 50_000));
