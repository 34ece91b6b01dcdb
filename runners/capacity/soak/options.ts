import { parseOptions, type OptionTable, type OptionValues, type ParseSources } from '../../../lib/options.ts';
import { LEDGER_MAX_CELLS } from '../../../engine/measure/ledger.ts';
import { LOOP_LAG_WARN_MS } from '../../../engine/measure/validity.ts';
import { checkTargetUrl, getTarget } from '../../../engine/targets/index.ts';
import { LEAN_TARGETS, leanClientFor } from '../../../engine/targets/index.ts';
import { invalidOption } from '../lists.ts';

/**
 * The soak's one option table (method: seeds/002): steady traffic for `durationSec`, a health
 * sample every `sampleSec`, and each pass/fail rule's threshold. CLI, env and HTTP all go through
 * parseSoakOptions, so a threshold has one default, here.
 */
export const SOAK_OPTIONS = {
  target: { type: 'string', default: 'replay', env: ['TARGET'], doc: 'target name' },
  url: { type: 'optional-string', default: undefined, env: ['TARGET_URL'], doc: 'base URL of an already running target; default: start it locally on port 0' },
  broadcastKey: { type: 'string', default: '', env: ['BROADCAST_KEY', 'ANYCABLE_BROADCAST_SECRET'], doc: 'bearer key for /_broadcast' },
  durationSec: { type: 'int', default: 600, min: 6, max: 86_400, env: ['SOAK_DURATION_SEC'], aliases: ['duration'], doc: 'seconds of steady traffic (the health series covers this span)' },
  sampleSec: { type: 'number', default: 10, min: 1, max: 600, env: ['SOAK_SAMPLE_SEC'], aliases: ['sample'], doc: 'seconds per health sample (window)' },
  warmupSec: { type: 'number', default: 30, min: 0, max: 3600, env: ['SOAK_WARMUP_SEC'], aliases: ['warmup'], doc: 'windows ending within this many seconds are shown but not judged (JIT, heap growth, connection setup)' },
  clients: { type: 'int', default: 200, min: 1, max: 10_000, env: ['NUM_CLIENTS', 'N'], aliases: ['n'], doc: 'subscribers on the soak stream' },
  rate: { type: 'number', default: 20, min: 0.1, max: 1000, env: ['SOAK_RATE'], doc: 'messages published per second (deliveries/s = clients x rate)' },
  payloadBytes: { type: 'int', default: 100, min: 0, max: 65_536, env: ['PAYLOAD_BYTES'], doc: 'padding added to each message' },
  clientKind: { type: 'enum', values: ['lean', 'full'], default: 'lean', env: ['SOAK_CLIENT'], doc: 'lean: one bare socket per client (engine/targets/lean-client.ts); full: the target\'s official client library' },
  ramp: { type: 'int', default: 200, min: 1, max: 100_000, env: ['RAMP_RATE'], doc: 'connects per second before traffic starts' },
  drainSec: { type: 'number', default: 5, min: 0, max: 300, doc: 'seconds to wait for the last deliveries after publishing stops (ends early once complete)' },
  stream: { type: 'string', default: '', maxLength: 256, env: ['STREAM'], doc: 'stream name; default soak-<runId>' },
  // Rule thresholds (rules.ts). Defaults: seeds/002's "no decay, flat memory, stable latency, zero
  // disconnects", with slack for a shared 2-core machine where GC and neighbours move figures.
  maxThroughputDecayPct: { type: 'number', default: 10, min: 0, max: 100, doc: 'throughput rule: the late third\'s mean deliveries/s may fall at most this % below the early third\'s' },
  maxRssSlopeMbPerMin: { type: 'number', default: 1, min: 0, max: 10_000, doc: 'memory rule: least-squares slope of target RSS over the judged windows, MB per minute' },
  rssNoiseMb: { type: 'number', default: 8, min: 0, max: 10_000, doc: 'memory rule: a fitted growth over the judged span below this many MB passes whatever the slope (GC swing; a short soak cannot resolve a smaller leak)' },
  minSlopeSpanSec: { type: 'number', default: 60, min: 0, max: 86_400, doc: 'memory rule: a slope above both bounds fails only over at least this many seconds of judged windows; shorter, the verdict is INSUFFICIENT_DURATION (0: judge any span)' },
  maxP99GrowthPct: { type: 'number', default: 50, min: 0, max: 10_000, doc: 'latency rule: the late third\'s median window p99 may exceed the early third\'s by this % ...' },
  p99SlackMs: { type: 'number', default: 10, min: 0, max: 60_000, doc: '... plus this many ms (a few-ms p99 moves by whole ms on a busy machine)' },
  maxUnexpectedDisconnects: { type: 'int', default: 0, min: 0, max: 1_000_000, doc: 'disconnect rule: disconnects the runner did not cause, over the whole soak' },
  minDeliveredPct: { type: 'number', default: 99.99, min: 0, max: 100, doc: 'delivery rule: first deliveries / (connected clients x accepted messages), %' },
  maxRigLagMs: { type: 'number', default: LOOP_LAG_WARN_MS, min: 1, max: 60_000, doc: 'validity: a window whose runner event-loop lag p99 exceeds this is the rig\'s, not the target\'s (left out of the latency rule)' },
} as const satisfies OptionTable;

export type SoakOptions = OptionValues<typeof SOAK_OPTIONS>;

/** The rule thresholds alone (rules.ts takes only these, so synthetic series are judged like real ones). */
export type SoakThresholds = Pick<SoakOptions, 'warmupSec' | 'maxThroughputDecayPct' | 'maxRssSlopeMbPerMin' | 'rssNoiseMb' | 'minSlopeSpanSec' | 'maxP99GrowthPct' | 'p99SlackMs' | 'maxUnexpectedDisconnects' | 'minDeliveredPct' | 'maxRigLagMs'>;

/** Validate at the edge: the table's ranges, then what only the combination can break. */
export function parseSoakOptions(src: ParseSources): SoakOptions {
  return checkSoakOptions(parseOptions(SOAK_OPTIONS, src));
}

/** The rules only the combination can break, over values already parsed. */
export function checkSoakOptions(o: SoakOptions): SoakOptions {
  getTarget(o.target);
  if (o.clientKind === 'lean' && !leanClientFor(o.target)) throw invalidOption('clientKind', `target "${o.target}" has no lean client (${LEAN_TARGETS.join(', ')} do); pass --client-kind full`);
  checkTargetUrl('url', o.url);
  if (o.sampleSec > o.durationSec / 3) throw invalidOption('sampleSec', `sampleSec ${o.sampleSec} leaves fewer than 3 health samples in ${o.durationSec} s`);
  // Rules compare an early and a late third of the judged windows: at least 3 must remain after warm-up.
  if (o.durationSec - o.warmupSec < 3 * o.sampleSec) throw invalidOption('warmupSec', `warmupSec ${o.warmupSec} leaves fewer than 3 judged samples of ${o.sampleSec} s in ${o.durationSec} s`);
  const messages = Math.ceil(o.durationSec * o.rate);
  if (o.clients * messages > LEDGER_MAX_CELLS) throw invalidOption('clients', `clients x messages = ${o.clients * messages} exceeds ${LEDGER_MAX_CELLS} ledger cells; lower clients, rate or durationSec`);
  return o;
}
