import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fleetMain } from './cli.ts';

/**
 * A local stand-in for Railway's GraphQL endpoint: it answers the two queries from a small
 * project (targets plus three runners), checks the bearer token and the shape of every request,
 * and records the mutations so the tests can check what pause/resume asked for.
 */
const TOKEN = 'rw-test-token';
const PROJECT_TOKEN = 'rw-project-token';
interface Req { operationName: string; query: string; variables: Record<string, unknown>; auth: string | undefined; project: string | undefined }
const seen: Req[] = [];
let server: Server;
let url = '';
const inst = (serviceId: string, serviceName: string, domain: string | null, status = 'SUCCESS') => ({
  serviceId, serviceName, environmentId: 'env-prod', numReplicas: 1,
  domains: { serviceDomains: domain ? [{ domain }] : [], customDomains: [] },
  latestDeployment: { id: `dep-${serviceId}`, status },
});
const INSTANCES = [
  inst('svc-replay', 'replay', 'replay.up.railway.app'),
  inst('svc-r10', 'bench-runner-10', 'r10.up.railway.app'),
  inst('svc-r2', 'bench-runner-2', 'r2.up.railway.app'),
  inst('svc-r1', 'bench-runner-1', 'r1.up.railway.app', 'REMOVED'),
];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const send = (status: number, json: unknown) => (res.writeHead(status, { 'content-type': 'application/json' }), res.end(JSON.stringify(json)));
      if (req.method !== 'POST' || req.url !== '/graphql/v2' || req.headers['content-type'] !== 'application/json') return send(400, { errors: [{ message: 'bad request shape' }] });
      const r = JSON.parse(body) as Req;
      const project = req.headers['project-access-token'] as string | undefined;
      seen.push({ ...r, auth: req.headers.authorization, project });
      // As Railway does: a project token only in its own header, an account token only as a Bearer.
      if (project ? project !== PROJECT_TOKEN || req.headers.authorization : req.headers.authorization !== `Bearer ${TOKEN}`) return send(200, { errors: [{ message: 'Not Authorized' }] });
      switch (r.operationName) {
        case 'Environments':
          if (!/project\(id: \$projectId\)/.test(r.query) || r.variables.projectId !== 'proj-1') return send(200, { errors: [{ message: 'Project not found' }] });
          return send(200, { data: { project: { id: 'proj-1', name: 'rebound', environments: { edges: [{ node: { id: 'env-dev', name: 'dev' } }, { node: { id: 'env-prod', name: 'production' } }] } } } });
        case 'ServiceInstances':
          if (r.variables.environmentId !== 'env-prod' || !/serviceInstances/.test(r.query)) return send(200, { errors: [{ message: 'Environment not found' }] });
          return send(200, { data: { environment: { id: 'env-prod', serviceInstances: { edges: INSTANCES.map((node) => ({ node })) } } } });
        case 'ScaleService':
          if (!/serviceInstanceUpdate\(/.test(r.query) || typeof (r.variables.input as { numReplicas?: unknown })?.numReplicas !== 'number') return send(200, { errors: [{ message: 'bad ScaleService' }] });
          return send(200, { data: { serviceInstanceUpdate: true } });
        case 'StopDeployment':
          return send(200, { data: { deploymentStop: /deploymentStop\(id: \$id\)/.test(r.query) } });
        case 'RedeployService':
          return send(200, { data: { serviceInstanceRedeploy: /serviceInstanceRedeploy\(/.test(r.query) } });
        default:
          return send(200, { errors: [{ message: `unknown operation ${r.operationName}` }] });
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql/v2`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const run = async (argv: string[], env: Record<string, string | undefined> = {}) => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await fleetMain(argv, { out: (s) => void out.push(s), err: (s) => void err.push(s), env: { RAILWAY_API_TOKEN: TOKEN, RAILWAY_PROJECT_ID: 'proj-1', RAILWAY_API_URL: url, ...env } });
  return { code, out: out.join(''), err: err.join('') };
};
const mutations = () => seen.filter((r) => !['Environments', 'ServiceInstances'].includes(r.operationName)).map((r) => [r.operationName, r.variables]);

describe('npm run fleet against a Railway API stand-in', () => {
  it('shards prints the runners\' URLs in name order, targets left out', async () => {
    seen.length = 0;
    const r = await run(['shards']);
    expect(r).toMatchObject({ code: 0, out: 'SHARDS=https://r1.up.railway.app,https://r2.up.railway.app,https://r10.up.railway.app\n' });
    expect(seen.map((x) => x.operationName)).toEqual(['Environments', 'ServiceInstances']);
    expect(seen.every((x) => x.auth === `Bearer ${TOKEN}` && x.project === undefined)).toBe(true);
    expect(mutations()).toEqual([]);
  });

  it('RAILWAY_TOKEN is a project token in the project-access-token header, and wins over RAILWAY_API_TOKEN as in Railway\'s CLI', async () => {
    for (const env of [{ RAILWAY_TOKEN: PROJECT_TOKEN, RAILWAY_API_TOKEN: '' }, { RAILWAY_TOKEN: PROJECT_TOKEN, RAILWAY_API_TOKEN: 'ignored' }]) {
      seen.length = 0;
      expect((await run(['shards'], env)).code).toBe(0);
      expect(seen.every((x) => x.project === PROJECT_TOKEN && x.auth === undefined)).toBe(true);
    }
    // The old behaviour (a project token as a Bearer) is what Railway refuses; the error names the token used.
    await expect(run(['shards'], { RAILWAY_TOKEN: TOKEN })).rejects.toMatchObject({ code: 'RR_ERR_FLEET_API', message: expect.stringMatching(/RAILWAY_TOKEN as a project token.*Not Authorized/) });
    await expect(run(['shards'], { RAILWAY_API_TOKEN: 'nope' })).rejects.toMatchObject({ message: expect.stringMatching(/RAILWAY_API_TOKEN as an account\/workspace token \(Bearer\)\): Not Authorized/) });
  });

  it('pause scales every runner to 0 and stops live deployments; nothing else is touched', async () => {
    seen.length = 0;
    const r = await run(['pause']);
    expect(r.code).toBe(0);
    expect(r.out).toBe('paused (0 replicas, deployments stopped): bench-runner-1, bench-runner-2, bench-runner-10\n');
    expect(mutations()).toEqual([
      ['ScaleService', { serviceId: 'svc-r1', environmentId: 'env-prod', input: { numReplicas: 0 } }],
      ['ScaleService', { serviceId: 'svc-r2', environmentId: 'env-prod', input: { numReplicas: 0 } }],
      ['StopDeployment', { id: 'dep-svc-r2' }],
      ['ScaleService', { serviceId: 'svc-r10', environmentId: 'env-prod', input: { numReplicas: 0 } }],
      ['StopDeployment', { id: 'dep-svc-r10' }],
    ]);
  });

  it('resume scales them back and redeploys', async () => {
    seen.length = 0;
    const r = await run(['resume', '--replicas', '2']);
    expect(r.code).toBe(0);
    expect(mutations()).toEqual(
      ['svc-r1', 'svc-r2', 'svc-r10'].flatMap((id) => [
        ['ScaleService', { serviceId: id, environmentId: 'env-prod', input: { numReplicas: 2 } }],
        ['RedeployService', { serviceId: id, environmentId: 'env-prod' }],
      ]),
    );
  });

  it('a missing token, a wrong token, an unknown project and an unreachable API are clear errors', async () => {
    await expect(run(['shards'], { RAILWAY_API_TOKEN: '' })).rejects.toMatchObject({ code: 'RR_ERR_FLEET_TOKEN_MISSING', message: expect.stringContaining('RAILWAY_API_TOKEN') });
    await expect(run(['shards'], { RAILWAY_API_TOKEN: 'nope' })).rejects.toMatchObject({ code: 'RR_ERR_FLEET_API', message: expect.stringContaining('Not Authorized') });
    await expect(run(['shards'], { RAILWAY_PROJECT_ID: 'other' })).rejects.toMatchObject({ message: expect.stringContaining('Project not found') });
    await expect(run(['shards'], { RAILWAY_API_URL: 'http://127.0.0.1:1/graphql/v2' })).rejects.toMatchObject({ code: 'RR_ERR_FLEET_API', message: expect.stringContaining('unreachable') });
    await expect(run(['scale'])).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID' });
    expect((await run(['--help'])).out).toContain('usage: npm run fleet');
  });
});
