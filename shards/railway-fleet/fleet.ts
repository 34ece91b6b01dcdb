import { ReboundError } from '../../lib/errors.ts';
import { OPERATIONS as OP } from './operations.ts';
import type { GqlClient } from './railway-api.ts';

interface Edges<T> {
  edges: { node: T }[];
}

/**
 * A project token (`RAILWAY_TOKEN`) is scoped to one project and one environment, and Railway's CLI
 * needs nothing else with it; so neither do we: the ids come from the token itself. An explicit
 * `--project` that names another project is refused here, not left to a later "Not Authorized".
 */
export async function projectOfToken(gql: GqlClient, wantedProject?: string): Promise<{ projectId: string; environmentId: string; environmentName: string }> {
  const d = await gql<{ projectToken: { project: { id: string; name: string }; environment: { id: string; name: string } } | null }>('ProjectToken', OP.ProjectToken, {});
  const t = d.projectToken;
  if (!t?.project?.id || !t.environment?.id) throw new ReboundError('RR_ERR_FLEET_API', 'Railway answered ProjectToken without a project and environment: is RAILWAY_TOKEN a project token?');
  if (wantedProject && wantedProject !== t.project.id) throw new ReboundError('RR_ERR_OPTION_INVALID', `RAILWAY_PROJECT_ID/--project is ${wantedProject} but RAILWAY_TOKEN is a token of project ${t.project.id} (${t.project.name}): unset one, or use that project's token`);
  return { projectId: t.project.id, environmentId: t.environment.id, environmentName: t.environment.name };
}

/** The environment to act on: the one named, else `production`, else the project's only one. */
export async function resolveEnvironment(gql: GqlClient, projectId: string, wanted?: string): Promise<string> {
  const d = await gql<{ project: { environments: Edges<{ id: string; name: string }> } }>('ProjectEnvironments', OP.ProjectEnvironments, { projectId });
  const envs = d.project.environments.edges.map((e) => e.node);
  const hit = wanted ? envs.find((e) => e.id === wanted || e.name === wanted) : (envs.find((e) => e.name === 'production') ?? (envs.length === 1 ? envs[0] : undefined));
  if (!hit) throw new ReboundError('RR_ERR_OPTION_INVALID', `no environment ${wanted ? `"${wanted}"` : 'named production'} in project ${projectId} (have: ${envs.map((e) => e.name).join(', ') || 'none'}); set RAILWAY_ENVIRONMENT`, { details: { option: 'environment' } });
  return hit.id;
}

export async function listServices(gql: GqlClient, projectId: string, environmentId: string) {
  type Node = { serviceId: string; serviceName: string; environmentId: string; numReplicas?: number | null; domains?: { serviceDomains?: { domain: string }[]; customDomains?: { domain: string }[] }; latestDeployment?: { id: string; status: string } | null };
  const d = await gql<{ environment: { serviceInstances: Edges<Node> } }>('ServiceInstances', OP.ServiceInstances, { environmentId, projectId });
  return d.environment.serviceInstances.edges.map(({ node: n }) => ({
    serviceId: n.serviceId,
    serviceName: n.serviceName,
    environmentId: n.environmentId ?? environmentId,
    numReplicas: n.numReplicas ?? null,
    domains: [...(n.domains?.customDomains ?? []), ...(n.domains?.serviceDomains ?? [])].map((x) => x.domain),
    deploymentId: n.latestDeployment?.id ?? null,
    deploymentStatus: n.latestDeployment?.status ?? null,
  }));
}

export type FleetService = Awaited<ReturnType<typeof listServices>>[number];

/** Runner shards: services whose name starts with the prefix (`bench-runner-1`, `bench-runner-2`, ...), in name order. */
export const runnerServices = (all: readonly FleetService[], prefix: string) =>
  all.filter((s) => s.serviceName.startsWith(prefix)).sort((a, b) => a.serviceName.localeCompare(b.serviceName, 'en', { numeric: true }));

/** The SHARDS list: each runner's public domain over https; a runner without a domain is named, not skipped silently. */
export function shardsList(runners: readonly FleetService[]): { shards: string; missing: string[] } {
  const missing = runners.filter((r) => !r.domains.length).map((r) => r.serviceName);
  return { shards: runners.filter((r) => r.domains.length).map((r) => `https://${r.domains[0]}`).join(','), missing };
}

/** Scale the runners to 0 replicas and stop their running deployments (the fleet costs nothing while paused). */
export async function pause(gql: GqlClient, runners: readonly FleetService[]): Promise<string[]> {
  for (const r of runners) {
    await gql('ServiceInstanceUpdate', OP.ServiceInstanceUpdate, { serviceId: r.serviceId, environmentId: r.environmentId, input: { numReplicas: 0 } });
    if (r.deploymentId && ['SUCCESS', 'DEPLOYING', 'BUILDING', 'INITIALIZING', 'WAITING'].includes(r.deploymentStatus ?? '')) await gql('DeploymentStop', OP.DeploymentStop, { id: r.deploymentId });
  }
  return runners.map((r) => r.serviceName);
}

/** Scale the runners back to `replicas` and redeploy them. */
export async function resume(gql: GqlClient, runners: readonly FleetService[], replicas: number): Promise<string[]> {
  for (const r of runners) {
    await gql('ServiceInstanceUpdate', OP.ServiceInstanceUpdate, { serviceId: r.serviceId, environmentId: r.environmentId, input: { numReplicas: replicas } });
    await gql('ServiceInstanceRedeploy', OP.ServiceInstanceRedeploy, { serviceId: r.serviceId, environmentId: r.environmentId });
  }
  return runners.map((r) => r.serviceName);
}
