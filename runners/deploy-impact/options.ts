import { ReboundError } from '../../lib/errors.ts';
import { parseOptions, type OptionTable, type OptionValues } from '../../lib/options.ts';
import { LEDGER_MAX_CELLS } from '../../engine/measure/ledger.ts';
import { checkTargetUrl, getTarget } from '../../engine/targets/index.ts';
import { checkReconnectOptions } from '../../engine/targets/reconnect.ts';

/**
 * Deploy-impact options: clients stay on the realtime server while the app side (a standalone
 * publisher process) is killed and restarted mid-run. Defaults: the 1,000 clients and
 * 10 msg/s; the deploy takes `publisherDownMs` before the new publisher process is started.
 */
export const DEPLOY_IMPACT_OPTIONS = {
  target: { type: 'string', default: 'socketio', env: ['TARGET'], doc: 'target name' },
  url: { type: 'optional-string', default: undefined, env: ['TARGET_URL'], doc: 'base URL of an already running target (loopback only); default: start it locally' },
  broadcastUrl: { type: 'optional-string', default: undefined, env: ['BROADCAST_URL'], doc: 'where to POST broadcasts (e.g. anycable-go\'s http://127.0.0.1:8090/_broadcast); default <url>/_broadcast' },
  clients: { type: 'int', default: 1000, min: 1, max: 18_000, env: ['NUM_CLIENTS'], aliases: ['n'], doc: 'concurrent clients' },
  rate: { type: 'number', default: 10, min: 0.1, max: 1000, env: ['PUB_RATE'], aliases: ['pub-rate'], doc: 'messages per second on the publisher\'s schedule' },
  ramp: { type: 'int', default: 200, min: 1, max: 100_000, env: ['RAMP_RATE'], doc: 'client connects per second' },
  warmupMs: { type: 'int', default: 5000, min: 500, max: 600_000, env: ['DEPLOY_WARMUP_MS'], aliases: ['pre-deploy-ms'], doc: 'publishing time before the publisher is killed, ms' },
  publisherDownMs: { type: 'int', default: 2000, min: 0, max: 600_000, env: ['DEPLOY_PUBLISHER_DOWN_MS'], doc: 'how long the deploy keeps the publisher down before its new process starts, ms (process start time comes on top)' },
  publishAfterMs: { type: 'int', default: 10_000, min: 1000, max: 600_000, env: ['DEPLOY_PUBLISH_AFTER_MS'], aliases: ['post-deploy-ms'], doc: 'the publisher\'s schedule runs this long after the kill, ms' },
  settleMs: { type: 'int', default: 3000, min: 0, max: 600_000, env: ['SETTLE_MS'], doc: 'wait for the last deliveries (ends early once complete)' },
  signal: { type: 'enum', values: ['kill', 'term'], default: 'kill', env: ['DEPLOY_SIGNAL'], doc: 'how the publisher process is stopped: SIGKILL or SIGTERM' },
  payloadBytes: { type: 'int', default: 0, min: 0, max: 65_536, env: ['PAYLOAD_BYTES'], doc: 'padding added to each message' },
  seed: { type: 'int', default: 0, min: 0, max: 0x7fffffff, env: ['SEED'], doc: 'seed for runner-driven reconnects; 0 picks one' },
  stream: { type: 'string', default: '', maxLength: 256, env: ['STREAM'], doc: 'stream/room name; default deploy-impact-<runId>' },
  broadcastKey: { type: 'string', default: '', env: ['BROADCAST_KEY', 'ANYCABLE_BROADCAST_SECRET'], doc: 'bearer key for /_broadcast' },
  reconnectStrategy: { type: 'enum', values: ['default', 'tuned'], default: 'default', env: ['RECONNECT_STRATEGY'], doc: 'reconnect backoff if a client does drop' },
} as const satisfies OptionTable;

export type DeployImpactOptions = OptionValues<typeof DEPLOY_IMPACT_OPTIONS>;

export const deployMessages = (o: Pick<DeployImpactOptions, 'rate' | 'warmupMs' | 'publishAfterMs'>) => Math.max(2, Math.round(((o.warmupMs + o.publishAfterMs) / 1000) * o.rate));

export function parseDeployImpactOptions(src: Parameters<typeof parseOptions>[1]): DeployImpactOptions {
  return checkDeployImpactOptions(parseOptions(DEPLOY_IMPACT_OPTIONS, src));
}

/** The rules only the combination can break, over values already parsed. */
export function checkDeployImpactOptions(opts: DeployImpactOptions): DeployImpactOptions {
  const target = getTarget(opts.target);
  const bad = (option: string, message: string) => new ReboundError('RR_ERR_OPTION_INVALID', message, { details: { option } });
  checkTargetUrl('broadcastUrl', opts.broadcastUrl, 'broadcast-url must be a loopback http URL unless REBOUND_ALLOW_REMOTE_TARGETS=1');
  checkTargetUrl('url', opts.url, 'url must be a loopback http(s) URL unless REBOUND_ALLOW_REMOTE_TARGETS=1');
  if (opts.url === undefined && !target.service) throw bad('url', `target "${target.name}" has no local service: pass --url`);
  checkReconnectOptions(target, opts);
  if (opts.clients * deployMessages(opts) > LEDGER_MAX_CELLS) throw bad('clients', `clients x messages exceeds ${LEDGER_MAX_CELLS} ledger cells`);
  if (opts.publisherDownMs >= opts.publishAfterMs) throw bad('publisherDownMs', `publisher-down-ms (${opts.publisherDownMs}) must be shorter than publish-after-ms (${opts.publishAfterMs}): the new publisher must have messages left to send`);
  return opts;
}
