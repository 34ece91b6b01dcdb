import { type OptionTable, type OptionValues } from '../../lib/options.ts';

/** `npm run bench:sick-redis -- --help`: the one option table of the sick-Redis runner. */
export const SICK_REDIS_OPTIONS = {
  scenarios: { type: 'string', default: 'stall,aof,empty,flood', pattern: /^(stall|aof|empty|flood)(,(stall|aof|empty|flood))*$/, doc: 'scenarios run one after the other in this run: stall (SIGSTOP), aof (SIGKILL + restart, appendfsync always), empty (SIGKILL + restart, no persistence), flood (60 x 10 MB broadcasts)' },
  clients: { type: 'int', default: 1000, min: 1, max: 50_000, doc: 'official @anycable/core clients, dealt round-robin over the nodes' },
  clientProcs: { type: 'int', default: 4, min: 1, max: 32, doc: 'runner processes holding the clients (the fd limit and one event loop are per process)' },
  nodes: { type: 'int', default: 2, min: 1, max: 8, doc: 'replay node processes (--broker redis) on the one redis-server' },
  rate: { type: 'number', default: 10, min: 0.1, max: 1000, doc: 'messages per second (Rebound publisher: idempotency keys, retries)' },
  beforeMs: { type: 'int', default: 3000, min: 500, max: 60_000, doc: 'publishing before the Redis event' },
  stallMs: { type: 'int', default: 10_000, min: 100, max: 120_000, doc: 'stall: how long Redis stays SIGSTOPped' },
  downMs: { type: 'int', default: 3000, min: 0, max: 60_000, doc: 'aof/empty: how long Redis stays dead after SIGKILL' },
  afterMs: { type: 'int', default: 5000, min: 500, max: 120_000, doc: 'publishing after Redis is back' },
  settleMs: { type: 'int', default: 8000, min: 0, max: 120_000, doc: 'wait after the last publish for late deliveries (ends early when every accepted message is delivered everywhere)' },
  dropBeforeKill: { type: 'number', default: 0.1, min: 0, max: 1, doc: 'empty: share of the clients dropped (socket terminated, library reconnect) 150 ms before the kill, so some are away when Redis loses the data: their missed messages exercise the BROKER_EPOCH_CHANGED booking' },
  awayAcrossRestart: { type: 'number', default: 0.05, min: 0, max: 0.5, doc: 'aof/empty: share of the clients (others than dropBeforeKill\'s) closed 150 ms before the kill and reconnected 1.5 s after the restart, so they resume against the restarted Redis with their old position: after an empty restart it names the ended epoch (reject_history epoch_changed, then the new epoch from offset 1)' },
  publishTimeoutMs: { type: 'int', default: 3000, min: 100, max: 60_000, doc: "publisher's per-request timeout (the server's deadline is the replay node's redisCommandTimeoutMs, 1,000 ms by default)" },
  deadlineMs: { type: 'int', default: 1000, min: 50, max: 60_000, doc: 'the replay nodes\' redisCommandTimeoutMs (REDIS_COMMAND_TIMEOUT_MS), also the goal every publish answer is held to' },
  answerSlackMs: { type: 'int', default: 250, min: 0, max: 10_000, doc: 'allowance over the deadline for a publish answer (HTTP round trip and scheduling on a shared box)' },
  healthGoalMs: { type: 'int', default: 2000, min: 100, max: 60_000, doc: 'stall: /health must be degraded on every node within this' },
  floodMessages: { type: 'int', default: 60, min: 1, max: 1000, doc: 'flood: broadcasts, one stream each' },
  floodBytes: { type: 'int', default: 10_000_000, min: 1024, max: 10_485_000, doc: 'flood: data bytes per broadcast' },
  rssCapMb: { type: 'int', default: 1024, min: 64, max: 65_536, doc: "flood: the replay node's RSS cap with the default byte caps (docs/replay-server.md, 'Byte bounds')" },
  timeLimitSec: { type: 'int', default: 180, min: 10, max: 1800, doc: 'hard bound on each scenario: past it the scenario is stopped and reported as failed' },
  out: { type: 'string', default: '', pattern: /^\S*$/, doc: 'also write the figure file {commit, command, measuredAt, results[]} here' },
} satisfies OptionTable;

export type SickRedisOptions = OptionValues<typeof SICK_REDIS_OPTIONS>;
export type Scenario = 'stall' | 'aof' | 'empty' | 'flood';
/** What one scenario reads: every option but the list of scenarios. */
export type ScenarioOptions = Omit<SickRedisOptions, 'scenarios'>;
/** The module's options: the table's values with the scenarios as a list (parsed once). */
export type SickRedisRunOptions = ScenarioOptions & { scenarios: Scenario[] };
