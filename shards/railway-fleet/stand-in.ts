import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Railway's GraphQL endpoint (test helper). It keeps a small project's state
 * (services, their variables, domains, deployments) and checks every request as Railway would
 * refuse it: the token in the header its kind goes in, the document's operation name equal to
 * `operationName`, every variable sent declared and every non-null one present, the root field
 * each operation is for, and the variables' shape per operation (below, written independently of
 * shards/railway-fleet/operations.ts so a drift in either shows).
 */
export interface StandInService {
  id: string;
  name: string;
  vars: Record<string, string>;
  domains: string[];
  replicas: number;
  deployment: { id: string; status: string } | null;
  source?: unknown;
}
interface SeenRequest { operationName: string; query: string; variables: Record<string, unknown>; auth: string | undefined; project: string | undefined }

export const API_TOKEN = 'rw-account-token';
export const PROJECT_TOKEN = 'rw-project-token';

type Check = (v: Record<string, unknown>) => string | undefined;
const str = (...keys: string[]): Check => (v) => keys.find((k) => typeof v[k] !== 'string' || !v[k]) && `${keys.find((k) => typeof v[k] !== 'string' || !v[k])} must be a non-empty String`;
const stringMap = (k: string): Check => (v) => {
  const m = v[k];
  if (!m || typeof m !== 'object' || Array.isArray(m)) return `${k} must be EnvironmentVariables (an object)`;
  const bad = Object.entries(m).find(([name, x]) => typeof x !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name));
  return bad ? `${k}.${bad[0]} must be a string variable` : undefined;
};
const all = (...checks: Check[]): Check => (v) => checks.map((c) => c(v)).find(Boolean);

const SHAPES: Record<string, { root: string; check: Check }> = {
  ProjectToken: { root: 'projectToken', check: (v) => (Object.keys(v).length ? 'ProjectToken takes no variables' : undefined) },
  ProjectEnvironments: { root: 'project', check: str('projectId') },
  ServiceInstances: { root: 'environment', check: str('environmentId', 'projectId') },
  ServiceVariables: { root: 'variables', check: str('projectId', 'environmentId', 'serviceId') },
  ServiceCreate: {
    root: 'serviceCreate',
    check: all(str('name', 'projectId', 'environmentId'), stringMap('variables'), (v) => {
      const s = v.source as { repo?: unknown; image?: unknown } | undefined;
      return s && typeof s === 'object' && Object.keys(s).length === 1 && (typeof s.repo === 'string' || typeof s.image === 'string') ? undefined : 'source must be ServiceSourceInput {repo} or {image}';
    }),
  },
  VariableCollectionUpsert: { root: 'variableCollectionUpsert', check: all(str('projectId', 'environmentId', 'serviceId'), stringMap('variables')) },
  ServiceDomainCreate: { root: 'serviceDomainCreate', check: all(str('environmentId', 'serviceId'), (v) => (Number.isInteger(v.targetPort) ? undefined : 'targetPort must be an Int')) },
  VariableDelete: { root: 'variableDelete', check: str('projectId', 'environmentId', 'name', 'serviceId') },
  ServiceDelete: { root: 'serviceDelete', check: str('environmentId', 'serviceId') },
  ServiceInstanceUpdate: { root: 'serviceInstanceUpdate', check: all(str('serviceId', 'environmentId'), (v) => (Number.isInteger((v.input as { numReplicas?: unknown })?.numReplicas) ? undefined : 'input.numReplicas must be an Int')) },
  DeploymentStop: { root: 'deploymentStop', check: str('id') },
  ServiceInstanceRedeploy: { root: 'serviceInstanceRedeploy', check: str('serviceId', 'environmentId') },
};

/** Generic GraphQL request checks: operation name and declared variables against what was sent. */
function checkDocument(r: SeenRequest): string | undefined {
  const head = /^\s*(query|mutation)\s+(\w+)\s*(?:\(([^)]*)\))?\s*\{/.exec(r.query);
  if (!head) return 'Syntax Error: expected one named operation';
  if (head[2] !== r.operationName) return `Unknown operation named "${r.operationName}"`;
  const declared = new Map([...(head[3] ?? '').matchAll(/\$(\w+)\s*:\s*([\w[\]]+!?)/g)].map((m) => [m[1]!, m[2]!]));
  for (const k of Object.keys(r.variables)) if (!declared.has(k)) return `Variable "$${k}" is not defined by operation "${r.operationName}"`;
  for (const [k, t] of declared) if (t.endsWith('!') && (r.variables[k] === undefined || r.variables[k] === null)) return `Variable "$${k}" of required type "${t}" was not provided.`;
  const shape = SHAPES[r.operationName];
  if (!shape) return `unknown operation ${r.operationName}`;
  if (!new RegExp(`\\{\\s*${shape.root}\\s*[({]`).test(r.query.slice(head[0].length - 1))) return `${r.operationName} must select ${shape.root}(...)`;
  return shape.check(r.variables);
}

export interface StandIn {
  url: string;
  seen: SeenRequest[];
  services: StandInService[];
  /** Answer this operation with a Railway error message (once). */
  failNext(operation: string, message: string): void;
  close(): Promise<void>;
}

export async function startStandIn(services: StandInService[], projectId = 'proj-1'): Promise<StandIn> {
  const seen: SeenRequest[] = [];
  const failures = new Map<string, string>();
  let seq = 0;
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const send = (status: number, json: unknown) => (res.writeHead(status, { 'content-type': 'application/json' }), res.end(JSON.stringify(json)));
      const fail = (message: string) => send(200, { data: null, errors: [{ message }] });
      if (req.method !== 'POST' || req.url !== '/graphql/v2' || req.headers['content-type'] !== 'application/json') return send(400, { errors: [{ message: 'bad request shape' }] });
      let r: SeenRequest;
      try {
        r = JSON.parse(body) as SeenRequest;
      } catch {
        return send(400, { errors: [{ message: 'body is not JSON' }] });
      }
      const project = req.headers['project-access-token'] as string | undefined;
      seen.push({ ...r, auth: req.headers.authorization, project });
      // As Railway does: a project token only in its own header, an account token only as a Bearer.
      if (project ? project !== PROJECT_TOKEN || req.headers.authorization : req.headers.authorization !== `Bearer ${API_TOKEN}`) return fail('Not Authorized');
      const bad = checkDocument(r);
      if (bad) return send(400, { errors: [{ message: bad }] });
      const once = failures.get(r.operationName);
      if (once !== undefined) return failures.delete(r.operationName), fail(once);
      const v = r.variables;
      if ('projectId' in v && v.projectId !== projectId) return fail('Project not found');
      if ('environmentId' in v && v.environmentId !== 'env-prod') return fail('Environment not found');
      // Every operation that names a service (and only those) declares serviceId.
      const s = services.find((x) => x.id === v.serviceId);
      if ('serviceId' in v && !s) return fail('Service not found');
      switch (r.operationName) {
        case 'ProjectToken':
          // Railway answers this one for a project token only; the token is scoped to one environment.
          return project ? send(200, { data: { projectToken: { project: { id: projectId, name: 'rebound' }, environment: { id: 'env-prod', name: 'production' } } } }) : fail('Not Authorized');
        case 'ProjectEnvironments':
          return send(200, { data: { project: { id: projectId, name: 'rebound', environments: { edges: [{ node: { id: 'env-dev', name: 'dev' } }, { node: { id: 'env-prod', name: 'production' } }] } } } });
        case 'ServiceInstances':
          return send(200, {
            data: {
              environment: {
                id: 'env-prod',
                serviceInstances: { edges: services.map((s) => ({ node: { serviceId: s.id, serviceName: s.name, environmentId: 'env-prod', numReplicas: s.replicas, domains: { serviceDomains: s.domains.map((domain) => ({ domain })), customDomains: [] }, latestDeployment: s.deployment } })) },
              },
            },
          });
        case 'ServiceVariables':
          return send(200, { data: { variables: s!.vars } });
        case 'ServiceCreate': {
          if (services.some((x) => x.name === v.name)) return fail(`A service named ${v.name} already exists`);
          const created: StandInService = { id: `svc-new-${++seq}`, name: String(v.name), vars: { ...(v.variables as unknown as Record<string, string>) }, domains: [], replicas: 1, deployment: { id: `dep-new-${seq}`, status: 'BUILDING' }, source: v.source };
          services.push(created);
          return send(200, { data: { serviceCreate: { id: created.id, name: created.name } } });
        }
        case 'VariableCollectionUpsert':
          return Object.assign(s!.vars, v.variables), send(200, { data: { variableCollectionUpsert: true } });
        case 'VariableDelete':
          if (!(String(v.name) in s!.vars)) return fail(`Variable ${v.name} not found`);
          delete s!.vars[String(v.name)];
          return send(200, { data: { variableDelete: true } });
        case 'ServiceDomainCreate':
          s!.domains.push(`${s!.name}-production.up.railway.app`);
          return send(200, { data: { serviceDomainCreate: { id: `dom-${s!.id}`, domain: s!.domains.at(-1) } } });
        case 'ServiceDelete':
          return services.splice(services.indexOf(s!), 1), send(200, { data: { serviceDelete: true } });
        case 'ServiceInstanceUpdate':
          return (s!.replicas = (v.input as { numReplicas: number }).numReplicas), send(200, { data: { serviceInstanceUpdate: true } });
        case 'DeploymentStop':
          return send(200, { data: { deploymentStop: true } });
        case 'ServiceInstanceRedeploy':
          return send(200, { data: { serviceInstanceRedeploy: true } });
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql/v2`,
    seen,
    services,
    failNext: (op, message) => void failures.set(op, message),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
