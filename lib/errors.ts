/**
 * Error registry: every error Rebound raises on purpose carries a stable machine code,
 * a human message and, where it reaches an HTTP edge, a status. docs/errors.md lists every
 * code; lib/errors.test.ts checks that the list and this registry agree.
 */
export const ERROR_CODES = {
  RR_ERR_OPTION_INVALID: { status: 400, title: 'Bad Request', doc: 'An option (CLI flag, query parameter, env var or JSON field) is malformed or out of range.' },
  RR_ERR_OPTION_UNKNOWN: { status: 400, title: 'Bad Request', doc: 'An option name is not recognised.' },
  RR_ERR_TARGET_UNKNOWN: { status: 400, title: 'Bad Request', doc: 'The target name is not one of the registered targets.' },
  RR_ERR_TARGET_MODULE_LOAD: { status: 400, title: 'Bad Request', doc: 'A target file of your own (--target-module, TARGET_MODULES) is missing, not .ts/.js, too large, or threw while loading; the message names the file.' },
  RR_ERR_TARGET_MODULE_INVALID: { status: 400, title: 'Bad Request', doc: "A target file's default export breaks the target contract (docs/targets.md); the message names the file and the field or hook." },
  RR_ERR_BODY_UNREADABLE: { status: 400, title: 'Bad Request', doc: 'The request body is not valid JSON (or not JSON at all).' },
  RR_ERR_BROADCAST_INVALID: { status: 422, title: 'Unprocessable Entity', doc: 'A broadcast is missing `stream`, has non-string `data`, or the batch is empty/too large. Nothing in the batch was delivered.' },
  RR_ERR_AUTH_MISSING: { status: 401, title: 'Unauthorized', doc: 'A bearer token is required and none was sent.' },
  RR_ERR_AUTH_INVALID: { status: 401, title: 'Unauthorized', doc: 'The bearer token does not match.' },
  RR_ERR_NOT_FOUND: { status: 404, title: 'Not Found', doc: 'No such route or resource.' },
  RR_ERR_PAYLOAD_TOO_LARGE: { status: 413, title: 'Payload Too Large', doc: 'The request body exceeds the configured limit.' },
  RR_ERR_SERVICE_START: { status: 500, title: 'Internal Server Error', doc: 'A service child process failed to start or report its port in time.' },
  RR_ERR_TARGET_UNAVAILABLE: { status: 503, title: 'Service Unavailable', doc: 'The target cannot run on this machine (uws: uWebSockets.js\'s native binary is not installed or does not load here; soketi: not installed, npm run install:soketi); the reason says why.' },
  RR_ERR_RUN_FAILED: { status: 500, title: 'Internal Server Error', doc: 'A runner aborted; the message names the cause.' },
  RR_ERR_CHAOS_PROXY_LISTEN: { status: 500, title: 'Internal Server Error', doc: 'The embedded chaos proxy cannot bind its API address.' },
  RR_ERR_CHAOS_PROXY_API: { status: 502, title: 'Bad Gateway', doc: 'A Toxiproxy API call (embedded or real) failed; details.status has its HTTP status.' },
  RR_ERR_WEATHER_INVALID: { status: 400, title: 'Bad Request', doc: 'The --weather population is malformed: an unknown condition (the message lists them), a share that is not <condition>:<1-100>, a condition twice, shares not summing to 100, or a network --plan beside it.' },
  RR_ERR_WEATHER_NEEDS_PROXY: { status: 400, title: 'Bad Request', doc: 'A weather condition (or a network plan) puts toxics on a proxy in front of the target, and this target cannot be reached through one: an https/wss --url (the proxy forwards plain TCP and clients would speak http to a TLS server).' },
  RR_ERR_WEATHER_NEEDS_RESTART: { status: 400, title: 'Bad Request', doc: 'The weather has a deploy (the target restarts) and the run cannot restart its target: a --url target without AVALANCHE_RESTART_COMMAND or AVALANCHE_RESTART_HOOK_URL in the runner\'s environment, or --workers above 1 (the restart belongs to the one process holding the target).' },
  // Reference services and chaos proxy (refsvc): edge checks.
  RR_ERR_UNSUPPORTED_ENCODING: { status: 415, title: 'Unsupported Media Type', doc: 'The request body uses a Content-Encoding (or charset) the server cannot decode; gzip, deflate, br and identity are accepted.' },
  // Replay server (replay): storage acknowledgements, admin routes and the cluster's rolling reload.
  RR_ERR_REPLAY_STORE_FAILED: { status: 503, title: 'Service Unavailable', doc: 'The replay server could not store a broadcast (cluster primary failing or not answering); it was not acknowledged.' },
  RR_ERR_ADMIN_FORBIDDEN: { status: 403, title: 'Forbidden', doc: 'Admin routes need the broadcast key, or a loopback peer when no key is set.' },
  RR_ERR_RELOAD_UNAVAILABLE: { status: 400, title: 'Bad Request', doc: 'A rolling reload needs cluster mode (--workers 2 or more).' },
  RR_ERR_RELOAD_IN_PROGRESS: { status: 409, title: 'Conflict', doc: 'A rolling reload is already running.' },
  RR_ERR_RELOAD_FAILED: { status: 500, title: 'Internal Server Error', doc: 'A replacement worker did not start; the reload stopped and the remaining old workers keep serving.' },
  // Avalanche and deploy-impact (runners/avalanche, runners/deploy-impact)
  RR_ERR_RESTART_FAILED: { status: 502, title: 'Bad Gateway', doc: 'The configured restart (signal and respawn, restart command, hook, worker reload) failed; the run is reported with the RESTART_FAILED validity flag.' },
  RR_ERR_RELOAD_UNSUPPORTED: { status: 501, title: 'Not Implemented', doc: 'The target does not support worker reload (POST /_admin/reload answered 404, or RR_ERR_RELOAD_UNAVAILABLE: not in cluster mode).' },
  RR_ERR_PUBLISHER_PROCESS: { status: 500, title: 'Internal Server Error', doc: 'The standalone publisher process of deploy-impact failed to start, exited before it was ready, or could not load the target it publishes for.' },
  // --- bench-runner shards (shards/runner, runners/idle|latency|throughput|whispers) ---
  RR_ERR_TARGET_URL_REFUSED: { status: 400, title: 'Bad Request', doc: 'A request passed a target URL (cableUrl, serverUrl, wsUrl, broadcastUrl, ...): runners take targets by name only; the operator configures URLs with TARGET_<NAME>_URL.' },
  RR_ERR_TARGET_NOT_CONFIGURED: { status: 400, title: 'Bad Request', doc: 'The target has no local service and no TARGET_<NAME>_URL is configured on this runner.' },
  RR_ERR_TARGET_UNSUPPORTED: { status: 400, title: 'Bad Request', doc: 'The test is not supported by this target (e.g. whispers on a protocol without client-to-client messages).' },
  RR_ERR_RUNNER_BUSY: { status: 429, title: 'Too Many Requests', doc: 'The runner shard already runs a heavy job; Retry-After says when to try again.' },
  RR_ERR_JOB_NOT_FOUND: { status: 404, title: 'Not Found', doc: 'No job, stored result or report with this id on this runner.' },
  RR_ERR_RUNNER_UNSAFE_BIND: { status: 400, title: 'Bad Request', doc: 'The runner refuses to listen on a non-loopback HOST without BENCH_RUNNER_TOKEN (startup error, exit 2).' },
  RR_ERR_RUNNER_WEAK_TOKEN: { status: 400, title: 'Bad Request', doc: 'The runner refuses to listen on a non-loopback HOST with a BENCH_RUNNER_TOKEN shorter than 16 characters (startup error, exit 2); loopback binds take any token.' },
  RR_ERR_RUNNER_WORKER: { status: 500, title: 'Internal Server Error', doc: 'A runner worker process failed or exited early; the message names the worker and the cause.' },
  RR_ERR_RUN_ABORTED: { status: 500, title: 'Internal Server Error', doc: 'The runner was stopped (SIGTERM) while the job ran; the job is failed with aborted: true and its partial result is stored.' },
  RR_ERR_RUNNER_LOCKED: { status: 500, title: 'Internal Server Error', doc: 'Another live runner process owns RESULTS_DIR (its pid is named); a second runner refuses to start (exit 2).' },
  RR_ERR_RESULTS_DISK_FULL: { status: 507, title: 'Insufficient Storage', doc: 'The results disk has less free space than RUNNER_MIN_FREE_BYTES; new jobs are refused until space is freed.' },
  // --- end bench-runner shards ---
  // --- coordinator, manifest/rebaseline, fleet (shards/coordinator, shards/manifest, shards/fleet) ---
  RR_ERR_SHARDS_MISSING: { status: 400, title: 'Bad Request', doc: 'A multi-shard command was run without SHARDS (or --shards).' },
  RR_ERR_SHARD_UNHEALTHY: { status: 503, title: 'Service Unavailable', doc: 'A shard failed the health sweep (GET /health, authenticated GET /jobs/nope); details name it and why.' },
  RR_ERR_MANIFEST_INVALID: { status: 400, title: 'Bad Request', doc: 'The tests manifest is unreadable or breaks its schema; the message names the test and field.' },
  RR_ERR_FLEET_TOKEN_MISSING: { status: 400, title: 'Bad Request', doc: 'A fleet command needs RAILWAY_TOKEN (project token) or RAILWAY_API_TOKEN (account token), with RAILWAY_PROJECT_ID for an account token (a project token names its own project).' },
  RR_ERR_FLEET_FOREIGN_SERVICE: { status: 409, title: 'Conflict', doc: 'fleet up found a service with a fleet name that fleet up did not make (no REBOUND_FLEET label); it is left alone.' },
  RR_ERR_FLEET_API: { status: 502, title: 'Bad Gateway', doc: 'The Railway GraphQL API refused a call or answered errors.' },
  // --- end coordinator block ---
  // Replay server on Redis (redis): the broker's store is unreachable.
  RR_ERR_REDIS_UNAVAILABLE: { status: 503, title: 'Service Unavailable', doc: 'The replay server cannot reach Redis (--broker redis): at start it exits non-zero; while running, /health answers 503.' },
  // Pusher-protocol targets (engine/targets/pusher.ts): what the server refused, naming the setting to fix.
  RR_ERR_PUSHER_APP_KEY: { status: 502, title: 'Bad Gateway', doc: 'The Pusher server does not know the app key (pusher:error 4001); set PUSHER_APP_KEY or the user part of --url.' },
  RR_ERR_PUSHER_APP_ID: { status: 502, title: 'Bad Gateway', doc: 'The Pusher HTTP API does not know the app id (404); set PUSHER_APP_ID or /apps/<app_id> in --url.' },
  RR_ERR_PUSHER_SECRET: { status: 502, title: 'Bad Gateway', doc: 'The Pusher HTTP API refused the signed publish (401/403): the app secret (PUSHER_APP_SECRET) or key is wrong.' },
  RR_ERR_PUSHER_PROTOCOL: { status: 502, title: 'Bad Gateway', doc: 'The server at --url did not speak the Pusher protocol (no pusher:connection_established).' },
  RR_ERR_PUSHER_CHANNEL: { status: 400, title: 'Bad Request', doc: 'The stream is not a public Pusher channel name (1-164 of A-Z a-z 0-9 _ - = @ , . ;, not private-/presence-).' },
  RR_ERR_PUSHER_EVENT_TOO_LARGE: { status: 413, title: 'Payload Too Large', doc: 'A message is larger than a Pusher event may be (10 KB), or the server refused its size.' },
  RR_ERR_INTERNAL: { status: 500, title: 'Internal Server Error', doc: 'An unexpected error; the server kept running.' },
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export class ReboundError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ReboundError';
    this.code = code;
    this.statusCode = ERROR_CODES[code].status;
    this.details = options.details;
  }
}

/** The one HTTP error body shape: `{ statusCode, error, code, message }` (plus `details` when useful), never a stack. */
export interface ErrorBody {
  statusCode: number;
  error: string;
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export function toErrorBody(err: unknown): ErrorBody {
  const e = err instanceof ReboundError ? err : new ReboundError('RR_ERR_INTERNAL', err instanceof Error ? err.message : String(err));
  const body: ErrorBody = { statusCode: e.statusCode, error: ERROR_CODES[e.code].title, code: e.code, message: e.message };
  if (e.details) body.details = e.details;
  return body;
}
