/**
 * Every GraphQL document `npm run fleet` sends, in one place so they can be checked against
 * Railway's public schema (railwayapp/cli src/gql/schema.json) in one pass. The mutations follow
 * the Railway CLI's own operation files (src/gql/mutations/strings/*.graphql) in name, variables
 * and input shape, selecting only the fields the fleet reads.
 */

export const OPERATIONS = {
  /** What a project token is scoped to (railwayapp/cli ProjectToken.graphql): `RAILWAY_TOKEN` alone names its project and environment. */
  ProjectToken: `query ProjectToken {
  projectToken { project { id name } environment { id name } }
}`,

  ProjectEnvironments: `query ProjectEnvironments($projectId: String!) {
  project(id: $projectId) { id name environments { edges { node { id name } } } }
}`,

  ServiceInstances: `query ServiceInstances($environmentId: String!, $projectId: String!) {
  environment(id: $environmentId, projectId: $projectId) {
    id
    serviceInstances { edges { node { serviceId serviceName environmentId numReplicas domains { serviceDomains { domain } customDomains { domain } } latestDeployment { id status } } } }
  }
}`,

  /** Rendered values of one service: `up` keeps the secrets it made before, `down` reads the fleet label. */
  ServiceVariables: `query ServiceVariables($projectId: String!, $environmentId: String!, $serviceId: String!) {
  variables(projectId: $projectId, environmentId: $environmentId, serviceId: $serviceId)
}`,

  ServiceCreate: `mutation ServiceCreate($name: String, $projectId: String!, $environmentId: String!, $source: ServiceSourceInput, $variables: EnvironmentVariables) {
  serviceCreate(input: {name: $name, projectId: $projectId, environmentId: $environmentId, source: $source, variables: $variables}) { id name }
}`,

  VariableCollectionUpsert: `mutation VariableCollectionUpsert($projectId: String!, $serviceId: String!, $environmentId: String!, $variables: EnvironmentVariables!, $skipDeploys: Boolean) {
  variableCollectionUpsert(input: {projectId: $projectId, environmentId: $environmentId, serviceId: $serviceId, variables: $variables, skipDeploys: $skipDeploys})
}`,

  /** One variable of one service: `up` removes the fleet-managed ones a new plan no longer wants (a dropped target's URL and key). */
  VariableDelete: `mutation VariableDelete($projectId: String!, $environmentId: String!, $name: String!, $serviceId: String) {
  variableDelete(input: {projectId: $projectId, environmentId: $environmentId, name: $name, serviceId: $serviceId})
}`,

  ServiceDomainCreate: `mutation ServiceDomainCreate($environmentId: String!, $serviceId: String!, $targetPort: Int) {
  serviceDomainCreate(input: {environmentId: $environmentId, serviceId: $serviceId, targetPort: $targetPort}) { id domain }
}`,

  ServiceDelete: `mutation ServiceDelete($environmentId: String!, $serviceId: String!) {
  serviceDelete(environmentId: $environmentId, id: $serviceId)
}`,

  ServiceInstanceUpdate: `mutation ServiceInstanceUpdate($serviceId: String!, $environmentId: String, $input: ServiceInstanceUpdateInput!) {
  serviceInstanceUpdate(serviceId: $serviceId, environmentId: $environmentId, input: $input)
}`,

  DeploymentStop: `mutation DeploymentStop($id: String!) {
  deploymentStop(id: $id)
}`,

  ServiceInstanceRedeploy: `mutation ServiceInstanceRedeploy($serviceId: String!, $environmentId: String!) {
  serviceInstanceRedeploy(serviceId: $serviceId, environmentId: $environmentId)
}`,
} as const;

export type OperationName = keyof typeof OPERATIONS;

/** Operations that change nothing: `--dry-run` sends these (it needs the project's state) and only prints the rest. */
export const READ_ONLY: ReadonlySet<OperationName> = new Set(['ProjectToken', 'ProjectEnvironments', 'ServiceInstances', 'ServiceVariables']);
