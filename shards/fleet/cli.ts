import { ReboundError } from '../../lib/errors.ts';
import { helpText, parseOptions, argvToValues, type OptionTable } from '../../lib/options.ts';
import { listServices, pause, resolveEnvironment, resume, runnerServices, shardsList } from './fleet.ts';
import { RAILWAY_API_URL, railwayAuth, railwayClient } from './railway-api.ts';

export const FLEET_OPTIONS = {
  project: { type: 'string', default: '', env: ['RAILWAY_PROJECT_ID', 'PROJECT_ID'], doc: 'Railway project id' },
  environment: { type: 'string', default: '', env: ['RAILWAY_ENVIRONMENT'], doc: 'environment id or name (default: production, or the only one)' },
  prefix: { type: 'string', default: 'bench-runner', maxLength: 64, env: ['RUNNER_SERVICE_PREFIX'], doc: 'runner services are the ones whose name starts with this' },
  replicas: { type: 'int', default: 1, min: 1, max: 50, env: ['RUNNER_REPLICAS'], doc: 'replicas per runner on resume' },
  apiUrl: { type: 'string', default: RAILWAY_API_URL, env: ['RAILWAY_API_URL'], doc: 'GraphQL endpoint (a stand-in in tests)' },
} as const satisfies OptionTable;

const USAGE = `usage: npm run fleet -- shards|pause|resume [options]\n  shards   print SHARDS=<runner URLs> for the project\n  pause    scale every runner service to 0 and stop its deployment\n  resume   scale them back and redeploy\n${helpText(FLEET_OPTIONS)}\nAuthentication (environment only, as Railway's CLI): RAILWAY_TOKEN = project token (project-access-token header), else RAILWAY_API_TOKEN = account/workspace token (Bearer).\n`;

/** `npm run fleet -- shards|pause|resume`. stdout: the SHARDS line or what changed; exit 2 on bad input, 1 on an API failure. */
export async function fleetMain(argv: string[], io = { out: (s: string) => void process.stdout.write(s), err: (s: string) => void process.stderr.write(s), env: process.env as Record<string, string | undefined> }): Promise<number> {
  const [cmd, ...rest] = argv;
  if (!cmd || cmd === '--help' || !['shards', 'pause', 'resume'].includes(cmd)) {
    if (cmd && cmd !== '--help') throw new ReboundError('RR_ERR_OPTION_INVALID', `unknown fleet command "${cmd}"; use shards, pause or resume`);
    return io.out(USAGE), 0;
  }
  const o = parseOptions(FLEET_OPTIONS, { values: argvToValues(rest, FLEET_OPTIONS), env: io.env, origin: 'CLI' });
  // Tokens come from the environment only, as for Railway's CLI: a secret on the command line lands in shell history.
  const auth = railwayAuth(io.env);
  if (!auth) throw new ReboundError('RR_ERR_FLEET_TOKEN_MISSING', `fleet ${cmd} needs RAILWAY_TOKEN (a project token, sent as project-access-token) or RAILWAY_API_TOKEN (an account/workspace token, sent as Bearer)`);
  if (!o.project) throw new ReboundError('RR_ERR_FLEET_TOKEN_MISSING', `fleet ${cmd} needs RAILWAY_PROJECT_ID (or --project)`);
  const gql = railwayClient(auth, o.apiUrl);
  const envId = await resolveEnvironment(gql, o.project, o.environment || undefined);
  const runners = runnerServices(await listServices(gql, envId), o.prefix);
  if (!runners.length) throw new ReboundError('RR_ERR_FLEET_API', `no service named ${o.prefix}* in project ${o.project}`);
  if (cmd === 'shards') {
    const { shards, missing } = shardsList(runners);
    if (missing.length) io.err(`no public domain (generate one in Railway's networking tab): ${missing.join(', ')}\n`);
    io.out(`SHARDS=${shards}\n`);
    return missing.length ? 1 : 0;
  }
  const names = cmd === 'pause' ? await pause(gql, runners) : await resume(gql, runners, o.replicas);
  io.out(`${cmd === 'pause' ? 'paused (0 replicas, deployments stopped)' : `resumed (${o.replicas} replica${o.replicas > 1 ? 's' : ''}, redeployed)`}: ${names.join(', ')}\n`);
  return 0;
}
