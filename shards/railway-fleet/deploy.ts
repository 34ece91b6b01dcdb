import { randomBytes } from 'node:crypto';
import { ReboundError } from '../../lib/errors.ts';
import { checkBindToken } from '../runner/options.ts';
import { envName } from '../runner/targets.ts';
import { listServices, type FleetService } from './fleet.ts';
import { OPERATIONS as OP, READ_ONLY, type OperationName } from './operations.ts';
import type { GqlClient } from './railway-api.ts';

/** The servers under test `up` can deploy, each a `SERVICE_ENTRY` of the one image (docs/railway.md). */
export const FLEET_TARGETS: Record<string, Record<string, string>> = {
  replay: { SERVICE_ENTRY: 'services/replay-server/main.ts' },
  socketio: { SERVICE_ENTRY: 'services/socketio/main.ts', SOCKETIO_MODE: 'default' },
  'socketio-csr': { SERVICE_ENTRY: 'services/socketio/main.ts', SOCKETIO_MODE: 'csr' },
  ws: { SERVICE_ENTRY: 'services/ws/main.ts' },
};

/**
 * The label `up` puts on every service it makes (a variable: Railway services have no free-form
 * labels), valued with the runner prefix. `down` deletes a service only when it carries it, so a
 * hand-made `replay` or `bench-runner-3` in the same project is never touched.
 */
export const FLEET_LABEL = 'REBOUND_FLEET';
/**
 * Set as a service variable: Railway injects its own PORT otherwise (the Dockerfile's ENV does
 * not count), and the private URLs the runners are given must name the port the targets use.
 */
const FLEET_PORT = '8080';

export interface UpPlan {
  projectId: string;
  environmentId: string;
  prefix: string;
  shards: number;
  targets: string[];
  source: { repo?: string; image?: string };
  /** Fixed runner token; else the one the fleet already has; else a new one. */
  runnerToken?: string;
}

/**
 * The variables `up` owns on the services it made, so a re-run with fewer targets takes the
 * dropped target's URL and key off every runner (a runner would otherwise keep offering a target
 * that no longer exists). Only these: a variable someone added by hand, including a TARGET_*_URL
 * for a server outside the fleet, is never touched.
 */
const FIXED_MANAGED = new Set(['SERVICE_ENTRY', 'SOCKETIO_MODE', 'PORT', 'HOST', FLEET_LABEL, 'BROADCAST_KEY', 'BENCH_RUNNER_TOKEN', 'REBOUND_ALLOW_REMOTE_TARGETS']);
const TARGET_MANAGED = new Set(Object.keys(FLEET_TARGETS).flatMap((t) => [`TARGET_${envName(t)}_URL`, `TARGET_${envName(t)}_BROADCAST_KEY`]));
const isManagedVariable = (name: string) => FIXED_MANAGED.has(name) || TARGET_MANAGED.has(name);

const secret = () => randomBytes(24).toString('base64url');
const isRunnerName = (prefix: string, name: string) => name.startsWith(`${prefix}-`) && /^\d+$/.test(name.slice(prefix.length + 1));

async function variablesOf(gql: GqlClient, projectId: string, environmentId: string, s: FleetService): Promise<Record<string, string>> {
  const d = await gql<{ variables: Record<string, string> | null }>('ServiceVariables', OP.ServiceVariables, { projectId, environmentId, serviceId: s.serviceId });
  return d.variables ?? {};
}

/**
 * Create or update the targets and `<prefix>-1..N`, idempotently: secrets already on the fleet are
 * kept, a service whose variables already match gets no mutation, a runner that already has a
 * public domain gets no second one. A same-named service without the fleet label is refused.
 */
export async function fleetUp(gql: GqlClient, plan: UpPlan, gen: () => string = secret) {
  const { projectId, environmentId, prefix } = plan;
  const unknown = plan.targets.filter((t) => !FLEET_TARGETS[t]);
  if (unknown.length) throw new ReboundError('RR_ERR_OPTION_INVALID', `--targets: unknown target ${unknown.join(', ')}; use ${Object.keys(FLEET_TARGETS).join(', ')}`);
  const all = await listServices(gql, projectId, environmentId);
  const byName = new Map(all.map((s) => [s.serviceName, s]));
  const runners = Array.from({ length: plan.shards }, (_, i) => `${prefix}-${i + 1}`);
  const existingVars = new Map<string, Record<string, string>>();
  for (const name of [...plan.targets, ...runners]) {
    const s = byName.get(name);
    if (!s) continue;
    const vars = await variablesOf(gql, projectId, environmentId, s);
    if (vars[FLEET_LABEL] !== prefix) throw new ReboundError('RR_ERR_FLEET_FOREIGN_SERVICE', `service "${name}" exists in this environment but was not made by fleet up (no ${FLEET_LABEL}=${prefix} variable): rename it, or pick another --prefix`, { details: { service: name } });
    existingVars.set(name, vars);
  }
  const oldToken = runners.map((n) => existingVars.get(n)?.BENCH_RUNNER_TOKEN).find(Boolean);
  const token = plan.runnerToken || oldToken || gen();
  const keys: Record<string, string> = Object.fromEntries(plan.targets.map((t) => [t, existingVars.get(t)?.BROADCAST_KEY || gen()]));
  const common = { PORT: FLEET_PORT, HOST: '::', [FLEET_LABEL]: prefix };
  // Before anything is created: runners given a short token would only crash-loop on '::'.
  checkBindToken(common.HOST, token);
  const wanted = new Map<string, Record<string, string>>();
  const runnerVars: Record<string, string> = { SERVICE_ENTRY: 'shards/runner/main.ts', ...common, BENCH_RUNNER_TOKEN: token, REBOUND_ALLOW_REMOTE_TARGETS: '1' };
  for (const t of plan.targets) {
    wanted.set(t, { ...FLEET_TARGETS[t], ...common, BROADCAST_KEY: keys[t]! });
    runnerVars[`TARGET_${envName(t)}_URL`] = `http://${t}.railway.internal:${FLEET_PORT}`;
    runnerVars[`TARGET_${envName(t)}_BROADCAST_KEY`] = keys[t]!;
  }
  for (const r of runners) wanted.set(r, runnerVars);

  const res = { token, created: [] as string[], updated: [] as string[], unchanged: [] as string[], domains: [] as string[], removed: [] as string[] };
  const ids = new Map<string, string>();
  for (const [name, variables] of wanted) {
    const s = byName.get(name);
    if (!s) {
      const d = await gql<{ serviceCreate: { id: string } }>('ServiceCreate', OP.ServiceCreate, { name, projectId, environmentId, source: plan.source, variables });
      ids.set(name, d.serviceCreate.id);
      res.created.push(name);
      continue;
    }
    ids.set(name, s.serviceId);
    const have = existingVars.get(name)!;
    const stale = Object.keys(have).filter((k) => isManagedVariable(k) && !(k in variables)).sort();
    for (const k of stale) await gql('VariableDelete', OP.VariableDelete, { projectId, environmentId, name: k, serviceId: s.serviceId });
    // `service: VAR, VAR`: the fleet-managed variables the plan no longer wants, deleted.
    if (stale.length) res.removed.push(`${name}: ${stale.join(', ')}`);
    if (Object.entries(variables).every(([k, v]) => have[k] === v)) (stale.length ? res.updated : res.unchanged).push(name);
    else {
      await gql('VariableCollectionUpsert', OP.VariableCollectionUpsert, { projectId, environmentId, serviceId: s.serviceId, variables });
      res.updated.push(name);
    }
  }
  const urls: string[] = [];
  for (const r of runners) {
    let domain = byName.get(r)?.domains[0];
    if (!domain) {
      const d = await gql<{ serviceDomainCreate: { domain: string } }>('ServiceDomainCreate', OP.ServiceDomainCreate, { environmentId, serviceId: ids.get(r)!, targetPort: Number(FLEET_PORT) });
      domain = d.serviceDomainCreate.domain;
      res.domains.push(r);
    }
    urls.push(`https://${domain}`);
  }
  return {
    shards: urls.join(','),
    ...res,
    // Runners beyond --shards: left as they are (down removes them).
    extra: all.filter((s) => isRunnerName(prefix, s.serviceName) && !runners.includes(s.serviceName)).map((s) => s.serviceName),
  };
}

/** Delete every service `up` made under this prefix (runner or target name and the fleet label); report the rest. */
export async function fleetDown(gql: GqlClient, projectId: string, environmentId: string, prefix: string): Promise<{ deleted: string[]; kept: string[] }> {
  const all = await listServices(gql, projectId, environmentId);
  const out = { deleted: [] as string[], kept: [] as string[] };
  for (const s of all) {
    if (!isRunnerName(prefix, s.serviceName) && !FLEET_TARGETS[s.serviceName]) continue;
    const vars = await variablesOf(gql, projectId, environmentId, s);
    if (vars[FLEET_LABEL] !== prefix) {
      out.kept.push(s.serviceName);
      continue;
    }
    await gql('ServiceDelete', OP.ServiceDelete, { environmentId, serviceId: s.serviceId });
    out.deleted.push(s.serviceName);
  }
  return out;
}

const SECRET_NAME = /TOKEN|KEY|SECRET|PASSWORD/i;
const redact = (v: unknown): unknown =>
  v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, SECRET_NAME.test(k) && typeof x === 'string' ? '<secret>' : redact(x)])) : v;

/**
 * `--dry-run`: every operation is printed (document and variables, secrets redacted); the
 * read-only ones are sent, since what up/down would do depends on what the project has, and the
 * mutations are answered locally with placeholders.
 */
export function dryRunClient(real: GqlClient, print: (s: string) => void): GqlClient {
  return async <T>(operationName: string, query: string, variables: Record<string, unknown>): Promise<T> => {
    const sent = READ_ONLY.has(operationName as OperationName);
    print(`# ${operationName} (${sent ? 'sent: read-only' : 'not sent: dry run'})\n${query}\nvariables: ${JSON.stringify(redact(variables))}\n\n`);
    if (sent) return real<T>(operationName, query, variables);
    const name = String(variables.name ?? variables.serviceId ?? '');
    const fake: Record<string, unknown> = {
      ServiceCreate: { serviceCreate: { id: `(new ${name})`, name } },
      ServiceDomainCreate: { serviceDomainCreate: { id: '(new)', domain: `(domain of ${name})` } },
    };
    return (fake[operationName] ?? { [operationName.charAt(0).toLowerCase() + operationName.slice(1)]: true }) as T;
  };
}
