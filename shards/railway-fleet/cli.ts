import { ReboundError } from '../../lib/errors.ts';
import { helpText, parseOptions, argvToValues, type OptionTable } from '../../lib/options.ts';
import { dryRunClient, fleetDown, fleetUp, FLEET_TARGETS } from './deploy.ts';
import { listServices, pause, projectOfToken, resolveEnvironment, resume, runnerServices, shardsList } from './fleet.ts';
import { RAILWAY_API_URL, railwayAuth, railwayClient } from './railway-api.ts';

export const FLEET_OPTIONS = {
  project: { type: 'string', default: '', env: ['RAILWAY_PROJECT_ID', 'PROJECT_ID'], doc: 'Railway project id (needed with RAILWAY_API_TOKEN; a project token names its own)' },
  environment: { type: 'string', default: '', env: ['RAILWAY_ENVIRONMENT'], doc: "environment id or name (default: a project token's own; else production, or the only one)" },
  prefix: { type: 'string', default: 'bench-runner', maxLength: 64, pattern: /^[a-z][a-z0-9-]*$/, env: ['RUNNER_SERVICE_PREFIX'], doc: 'runner services are <prefix>-1..N; the fleet label up sets and down checks' },
  replicas: { type: 'int', default: 1, min: 1, max: 50, env: ['RUNNER_REPLICAS'], doc: 'replicas per runner on resume' },
  shards: { type: 'int', default: 0, min: 0, max: 200, doc: 'up: number of runner services <prefix>-1..N (required for up)' },
  targets: { type: 'string', default: Object.keys(FLEET_TARGETS).join(','), doc: `up: servers under test to deploy (${Object.keys(FLEET_TARGETS).join(', ')})` },
  repo: { type: 'string', default: '', env: ['FLEET_SOURCE_REPO'], doc: 'up: GitHub repo (owner/name) Railway builds the Dockerfile from' },
  image: { type: 'string', default: '', env: ['FLEET_SOURCE_IMAGE'], doc: 'up: or a prebuilt image of this repository (e.g. ghcr.io/you/rebound:tag)' },
  dryRun: { type: 'bool', default: false, doc: 'up/down/pause/resume: print every GraphQL operation; send only the read-only ones' },
  apiUrl: { type: 'string', default: RAILWAY_API_URL, env: ['RAILWAY_API_URL'], doc: 'GraphQL endpoint (a stand-in in tests)' },
} as const satisfies OptionTable;

const COMMANDS = ['up', 'down', 'shards', 'pause', 'resume'];
const USAGE = `usage: npm run fleet -- up|down|shards|pause|resume [options]
  up       create or update the targets and <prefix>-1..N (--shards N), a public domain per runner; prints SHARDS= and BENCH_RUNNER_TOKEN=
  down     delete the services up made (fleet name and REBOUND_FLEET label), nothing else
  shards   print SHARDS=<runner URLs> for the project
  pause    scale every runner service to 0 and stop its deployment
  resume   scale them back and redeploy
${helpText(FLEET_OPTIONS)}
Authentication (environment only, as Railway's CLI): RAILWAY_TOKEN = project token (project-access-token header; its project and environment come from the token), else RAILWAY_API_TOKEN = account/workspace token (Bearer; needs RAILWAY_PROJECT_ID).
`;

/** `npm run fleet -- up|down|shards|pause|resume`. stdout: the SHARDS line or what changed; exit 2 on bad input, 1 on an API failure. */
export async function fleetMain(argv: string[], io = { out: (s: string) => void process.stdout.write(s), err: (s: string) => void process.stderr.write(s), env: process.env as Record<string, string | undefined> }): Promise<number> {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '--help' || !COMMANDS.includes(cmd)) {
    if (cmd && cmd !== '--help') throw new ReboundError('RR_ERR_OPTION_INVALID', `unknown fleet command "${cmd}"; use ${COMMANDS.join(', ')}`);
    return io.out(USAGE), 0;
  }
  const o = parseOptions(FLEET_OPTIONS, { values: argvToValues(rest, FLEET_OPTIONS), env: io.env, origin: 'CLI' });
  const targets = o.targets.split(',').map((t) => t.trim()).filter(Boolean);
  if (cmd === 'up') {
    if (o.shards < 1) throw new ReboundError('RR_ERR_OPTION_INVALID', 'fleet up needs --shards N (1..200): the number of runner services');
    if (Boolean(o.repo) === Boolean(o.image)) throw new ReboundError('RR_ERR_OPTION_INVALID', 'fleet up needs exactly one source: --repo owner/name (FLEET_SOURCE_REPO; Railway builds the Dockerfile) or --image <ref> (FLEET_SOURCE_IMAGE)');
  }
  // Tokens come from the environment only, as for Railway's CLI: a secret on the command line lands in shell history.
  const auth = railwayAuth(io.env);
  if (!auth) throw new ReboundError('RR_ERR_FLEET_TOKEN_MISSING', `fleet ${cmd} needs RAILWAY_TOKEN (a project token, sent as project-access-token) or RAILWAY_API_TOKEN (an account/workspace token, sent as Bearer)`);
  if (!o.project && auth.source === 'RAILWAY_API_TOKEN') throw new ReboundError('RR_ERR_FLEET_TOKEN_MISSING', `fleet ${cmd} with RAILWAY_API_TOKEN (an account/workspace token) needs RAILWAY_PROJECT_ID (or --project); a project token (RAILWAY_TOKEN) names its own project`);
  const real = railwayClient(auth, o.apiUrl);
  const gql = o.dryRun ? dryRunClient(real, io.out) : real;
  let envId: string;
  let projectId = o.project;
  if (auth.source === 'RAILWAY_TOKEN') {
    const t = await projectOfToken(gql, o.project || undefined);
    if (o.environment && o.environment !== t.environmentId && o.environment !== t.environmentName) throw new ReboundError('RR_ERR_OPTION_INVALID', `RAILWAY_ENVIRONMENT/--environment is "${o.environment}" but RAILWAY_TOKEN is scoped to environment "${t.environmentName}" (${t.environmentId}): a project token acts on its own environment only`);
    projectId = t.projectId;
    envId = t.environmentId;
  } else envId = await resolveEnvironment(gql, projectId, o.environment || undefined);
  if (cmd === 'up') {
    const r = await fleetUp(gql, { projectId, environmentId: envId, prefix: o.prefix, shards: o.shards, targets, source: o.repo ? { repo: o.repo } : { image: o.image }, runnerToken: io.env.BENCH_RUNNER_TOKEN || undefined });
    for (const [what, names] of [['created', r.created], ['updated', r.updated], ['unchanged', r.unchanged], ['public domain added', r.domains]] as const) if (names.length) io.err(`${what}: ${names.join(', ')}\n`);
    if (r.removed.length) io.err(`variables removed (managed by fleet up, no longer in the plan): ${r.removed.join('; ')}\n`);
    if (r.extra.length) io.err(`left as they are (beyond --shards ${o.shards}; fleet down removes them): ${r.extra.join(', ')}\n`);
    io.out(`SHARDS=${r.shards}\nBENCH_RUNNER_TOKEN=${o.dryRun ? '<secret>' : r.token}\n`);
    return 0;
  }
  if (cmd === 'down') {
    const r = await fleetDown(gql, projectId, envId, o.prefix);
    if (r.kept.length) io.err(`kept (no REBOUND_FLEET=${o.prefix} label, not made by fleet up): ${r.kept.join(', ')}\n`);
    io.out(`deleted: ${r.deleted.join(', ') || 'nothing'}\n`);
    return 0;
  }
  const runners = runnerServices(await listServices(gql, projectId, envId), o.prefix);
  if (!runners.length) throw new ReboundError('RR_ERR_FLEET_API', `no service named ${o.prefix}* in project ${projectId}`);
  if (cmd === 'shards') {
    const { shards, missing } = shardsList(runners);
    if (missing.length) io.err(`no public domain (generate one in Railway's networking tab, or run fleet up): ${missing.join(', ')}\n`);
    io.out(`SHARDS=${shards}\n`);
    return missing.length ? 1 : 0;
  }
  const names = cmd === 'pause' ? await pause(gql, runners) : await resume(gql, runners, o.replicas);
  io.out(`${cmd === 'pause' ? 'paused (0 replicas, deployments stopped)' : `resumed (${o.replicas} replica${o.replicas > 1 ? 's' : ''}, redeployed)`}: ${names.join(', ')}\n`);
  return 0;
}
