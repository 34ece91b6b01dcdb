import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetMain } from './cli.ts';
import { FLEET_LABEL } from './deploy.ts';
import { OPERATIONS } from './operations.ts';
import { API_TOKEN, PROJECT_TOKEN, startStandIn, type StandIn, type StandInService } from './stand-in.ts';

const svc = (id: string, name: string, domain: string | null, status = 'SUCCESS', vars: Record<string, string> = {}): StandInService => ({
  id, name, vars, domains: domain ? [domain] : [], replicas: 1, deployment: { id: `dep-${id}`, status },
});

let api: StandIn;
const run = async (argv: string[], env: Record<string, string | undefined> = {}, url = api.url) => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await fleetMain(argv, { out: (s) => void out.push(s), err: (s) => void err.push(s), env: { RAILWAY_API_TOKEN: API_TOKEN, RAILWAY_PROJECT_ID: 'proj-1', RAILWAY_API_URL: url, ...env } });
  return { code, out: out.join(''), err: err.join('') };
};
const READS = ['ProjectToken', 'ProjectEnvironments', 'ServiceInstances', 'ServiceVariables'];
const mutations = (s = api) => s.seen.filter((r) => !READS.includes(r.operationName)).map((r) => [r.operationName, r.variables]);

describe('npm run fleet shards|pause|resume against a Railway API stand-in', () => {
  beforeAll(async () => {
    api = await startStandIn([svc('svc-replay', 'replay', 'replay.up.railway.app'), svc('svc-r10', 'bench-runner-10', 'r10.up.railway.app'), svc('svc-r2', 'bench-runner-2', 'r2.up.railway.app'), svc('svc-r1', 'bench-runner-1', 'r1.up.railway.app', 'REMOVED')]);
  });
  afterAll(() => api.close());

  it("shards prints the runners' URLs in name order, targets left out", async () => {
    api.seen.length = 0;
    const r = await run(['shards']);
    expect(r).toMatchObject({ code: 0, out: 'SHARDS=https://r1.up.railway.app,https://r2.up.railway.app,https://r10.up.railway.app\n' });
    expect(api.seen.map((x) => x.operationName)).toEqual(['ProjectEnvironments', 'ServiceInstances']);
    expect(api.seen.every((x) => x.auth === `Bearer ${API_TOKEN}` && x.project === undefined)).toBe(true);
    expect(mutations()).toEqual([]);
  });

  it("RAILWAY_TOKEN is a project token in the project-access-token header, and wins over RAILWAY_API_TOKEN as in Railway's CLI", async () => {
    for (const env of [{ RAILWAY_TOKEN: PROJECT_TOKEN, RAILWAY_API_TOKEN: '' }, { RAILWAY_TOKEN: PROJECT_TOKEN, RAILWAY_API_TOKEN: 'ignored' }]) {
      api.seen.length = 0;
      expect((await run(['shards'], env)).code).toBe(0);
      expect(api.seen.length).toBe(2);
      expect(api.seen.every((x) => x.project === PROJECT_TOKEN && x.auth === undefined)).toBe(true);
    }
    // The old behaviour (a project token as a Bearer) is what Railway refuses; the error names the token used.
    await expect(run(['shards'], { RAILWAY_TOKEN: API_TOKEN })).rejects.toMatchObject({ code: 'RR_ERR_FLEET_API', message: expect.stringMatching(/RAILWAY_TOKEN as a project token.*Not Authorized/) });
    await expect(run(['shards'], { RAILWAY_API_TOKEN: 'nope' })).rejects.toMatchObject({ message: expect.stringMatching(/RAILWAY_API_TOKEN as an account\/workspace token \(Bearer\)\): Not Authorized/) });
  });

  it('a project token alone is enough: its project and environment come from the token (ProjectToken), as for Railway\'s CLI', async () => {
    api.seen.length = 0;
    const r = await run(['shards'], { RAILWAY_TOKEN: PROJECT_TOKEN, RAILWAY_API_TOKEN: '', RAILWAY_PROJECT_ID: '' });
    expect(r).toMatchObject({ code: 0, out: 'SHARDS=https://r1.up.railway.app,https://r2.up.railway.app,https://r10.up.railway.app\n' });
    expect(api.seen.map((x) => [x.operationName, x.variables])).toEqual([['ProjectToken', {}], ['ServiceInstances', { environmentId: 'env-prod', projectId: 'proj-1' }]]);
    // A project id or environment the token is not for is refused before anything else is sent.
    await expect(run(['shards'], { RAILWAY_TOKEN: PROJECT_TOKEN, RAILWAY_PROJECT_ID: 'proj-2' })).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID', message: expect.stringContaining('RAILWAY_TOKEN is a token of project proj-1') });
    await expect(run(['shards'], { RAILWAY_TOKEN: PROJECT_TOKEN, RAILWAY_ENVIRONMENT: 'dev' })).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID', message: expect.stringContaining('scoped to environment "production"') });
    expect((await run(['shards'], { RAILWAY_TOKEN: PROJECT_TOKEN, RAILWAY_ENVIRONMENT: 'production' })).code).toBe(0);
    // An account token has no project of its own: the id is still required, and the message says why.
    await expect(run(['shards'], { RAILWAY_PROJECT_ID: '' })).rejects.toMatchObject({ code: 'RR_ERR_FLEET_TOKEN_MISSING', message: expect.stringContaining('needs RAILWAY_PROJECT_ID') });
  });

  it('pause scales every runner to 0 and stops live deployments; nothing else is touched', async () => {
    api.seen.length = 0;
    const r = await run(['pause']);
    expect(r.code).toBe(0);
    expect(r.out).toBe('paused (0 replicas, deployments stopped): bench-runner-1, bench-runner-2, bench-runner-10\n');
    expect(mutations()).toEqual([
      ['ServiceInstanceUpdate', { serviceId: 'svc-r1', environmentId: 'env-prod', input: { numReplicas: 0 } }],
      ['ServiceInstanceUpdate', { serviceId: 'svc-r2', environmentId: 'env-prod', input: { numReplicas: 0 } }],
      ['DeploymentStop', { id: 'dep-svc-r2' }],
      ['ServiceInstanceUpdate', { serviceId: 'svc-r10', environmentId: 'env-prod', input: { numReplicas: 0 } }],
      ['DeploymentStop', { id: 'dep-svc-r10' }],
    ]);
  });

  it('resume scales them back and redeploys', async () => {
    api.seen.length = 0;
    const r = await run(['resume', '--replicas', '2']);
    expect(r.code).toBe(0);
    expect(mutations()).toEqual(
      ['svc-r1', 'svc-r2', 'svc-r10'].flatMap((id) => [
        ['ServiceInstanceUpdate', { serviceId: id, environmentId: 'env-prod', input: { numReplicas: 2 } }],
        ['ServiceInstanceRedeploy', { serviceId: id, environmentId: 'env-prod' }],
      ]),
    );
  });

  it('a missing token, a wrong token, an unknown project or environment and an unreachable API are clear errors', async () => {
    await expect(run(['shards'], { RAILWAY_API_TOKEN: '' })).rejects.toMatchObject({ code: 'RR_ERR_FLEET_TOKEN_MISSING', message: expect.stringContaining('RAILWAY_API_TOKEN') });
    await expect(run(['shards'], { RAILWAY_PROJECT_ID: 'other' })).rejects.toMatchObject({ message: expect.stringContaining('Project not found') });
    // An environment the project does not have is bad input (exit 2), named with those it has.
    await expect(run(['shards'], { RAILWAY_ENVIRONMENT: 'staging' })).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID', message: 'no environment "staging" in project proj-1 (have: dev, production); set RAILWAY_ENVIRONMENT' });
    await expect(run(['shards'], { RAILWAY_API_URL: 'http://127.0.0.1:1/graphql/v2' })).rejects.toMatchObject({ code: 'RR_ERR_FLEET_API', message: expect.stringContaining('unreachable') });
    await expect(run(['scale'])).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID' });
    expect((await run(['--help'])).out).toContain('usage: npm run fleet');
  });
});

describe('the stand-in refuses what Railway would refuse', () => {
  it('a misnamed operation, an undeclared or missing variable, a wrong shape', async () => {
    const s = await startStandIn([]);
    const post = (body: unknown) => fetch(s.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${API_TOKEN}` }, body: JSON.stringify(body) }).then(async (r) => [r.status, ((await r.json()) as { errors?: { message: string }[] }).errors?.[0]?.message]);
    const q = OPERATIONS.ProjectEnvironments;
    expect(await post({ operationName: 'Environments', query: q, variables: { projectId: 'proj-1' } })).toEqual([400, expect.stringContaining('Unknown operation')]);
    expect(await post({ operationName: 'ProjectEnvironments', query: q, variables: { projectId: 'proj-1', extra: 1 } })).toEqual([400, expect.stringContaining('"$extra" is not defined')]);
    expect(await post({ operationName: 'ProjectEnvironments', query: q, variables: {} })).toEqual([400, expect.stringContaining('required type')]);
    expect(await post({ operationName: 'ServiceDomainCreate', query: OPERATIONS.ServiceDomainCreate, variables: { environmentId: 'env-prod', serviceId: 'x', targetPort: '8080' } })).toEqual([400, 'targetPort must be an Int']);
    await s.close();
  });
});

describe('npm run fleet up|down', () => {
  let st: StandIn;
  beforeAll(async () => {
    // A project with one hand-made service that shares nothing with the fleet, and one that shares a name.
    st = await startStandIn([svc('svc-db', 'postgres', null), svc('svc-hand', 'bench-runner-9', 'hand.up.railway.app')]);
  });
  afterAll(() => st.close());
  const up = (extra: string[] = [], env: Record<string, string> = {}) => run(['up', '--shards', '2', '--targets', 'replay,socketio-csr', '--repo', 'me/rebound', ...extra], env, st.url);

  it('--dry-run prints every operation, sends only the reads and changes nothing', async () => {
    const r = await up(['--dry-run']);
    expect(r.code).toBe(0);
    const printed = [...r.out.matchAll(/^# (\w+) \((sent|not sent)/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect(printed).toEqual(['ProjectEnvironments sent', 'ServiceInstances sent', ...['replay', 'socketio-csr', 'bench-runner-1', 'bench-runner-2'].map(() => 'ServiceCreate not sent'), 'ServiceDomainCreate not sent', 'ServiceDomainCreate not sent']);
    expect(r.out).toContain(OPERATIONS.ServiceCreate);
    expect(r.out).not.toMatch(/"BENCH_RUNNER_TOKEN":"(?!<secret>)/);
    expect(st.seen.map((x) => x.operationName)).toEqual(['ProjectEnvironments', 'ServiceInstances']);
    expect(st.services.map((s) => s.name)).toEqual(['postgres', 'bench-runner-9']);
  });

  it('up creates the targets and runners with every variable, a domain per runner, and prints SHARDS', async () => {
    st.seen.length = 0;
    const r = await up();
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^SHARDS=https:\/\/bench-runner-1-production\.up\.railway\.app,https:\/\/bench-runner-2-production\.up\.railway\.app\nBENCH_RUNNER_TOKEN=[\w-]{32}\n$/);
    const token = /BENCH_RUNNER_TOKEN=(\S+)/.exec(r.out)![1];
    expect(r.err).toContain('created: replay, socketio-csr, bench-runner-1, bench-runner-2');
    const byName = Object.fromEntries(st.services.map((s) => [s.name, s]));
    expect(byName.replay!.vars).toEqual({ SERVICE_ENTRY: 'services/replay-server/main.ts', PORT: '8080', HOST: '::', [FLEET_LABEL]: 'bench-runner', BROADCAST_KEY: expect.stringMatching(/^[\w-]{32}$/) });
    expect(byName['socketio-csr']!.vars).toMatchObject({ SERVICE_ENTRY: 'services/socketio/main.ts', SOCKETIO_MODE: 'csr', PORT: '8080' });
    expect(byName.replay!.source).toEqual({ repo: 'me/rebound' });
    expect(byName.replay!.vars.BROADCAST_KEY).not.toBe(byName['socketio-csr']!.vars.BROADCAST_KEY);
    for (const n of ['bench-runner-1', 'bench-runner-2']) {
      expect(byName[n]!.vars).toEqual({
        SERVICE_ENTRY: 'shards/runner/main.ts', PORT: '8080', HOST: '::', [FLEET_LABEL]: 'bench-runner', BENCH_RUNNER_TOKEN: token, REBOUND_ALLOW_REMOTE_TARGETS: '1',
        TARGET_REPLAY_URL: 'http://replay.railway.internal:8080', TARGET_REPLAY_BROADCAST_KEY: byName.replay!.vars.BROADCAST_KEY,
        TARGET_SOCKETIO_CSR_URL: 'http://socketio-csr.railway.internal:8080', TARGET_SOCKETIO_CSR_BROADCAST_KEY: byName['socketio-csr']!.vars.BROADCAST_KEY,
      });
      expect(byName[n]!.domains).toHaveLength(1);
    }
    expect(byName.replay!.domains).toEqual([]);
    expect(mutations(st).filter(([op]) => op === 'ServiceDomainCreate').map(([, v]) => (v as { targetPort: number }).targetPort)).toEqual([8080, 8080]);
  });

  it('a re-run changes nothing and keeps the secrets; a changed source of truth is one upsert', async () => {
    const before = JSON.stringify(st.services);
    st.seen.length = 0;
    const r = await up();
    expect(mutations(st)).toEqual([]);
    expect(JSON.stringify(st.services)).toBe(before);
    expect(r.err).toContain('unchanged: replay, socketio-csr, bench-runner-1, bench-runner-2');
    const runner1 = st.services.find((s) => s.name === 'bench-runner-1')!;
    expect(r.out).toContain(`BENCH_RUNNER_TOKEN=${runner1.vars.BENCH_RUNNER_TOKEN}\n`);
    runner1.vars.PORT = '3000'; // someone edited it in the dashboard
    st.seen.length = 0;
    await up();
    expect(mutations(st)).toEqual([['VariableCollectionUpsert', expect.objectContaining({ serviceId: runner1.id, projectId: 'proj-1', environmentId: 'env-prod' })]]);
    expect(runner1.vars.PORT).toBe('8080');
  });

  it('up refuses a BENCH_RUNNER_TOKEN the runners would refuse (under 16 characters) before creating anything', async () => {
    const before = JSON.stringify(st.services);
    st.seen.length = 0;
    await expect(up([], { BENCH_RUNNER_TOKEN: 'secret' })).rejects.toMatchObject({ code: 'RR_ERR_RUNNER_WEAK_TOKEN', message: expect.stringContaining('6 characters') });
    expect(mutations(st)).toEqual([]);
    expect(JSON.stringify(st.services)).toBe(before);
  });

  it('up refuses to take over a same-named service it did not make; a Railway error is surfaced with its message', async () => {
    await expect(run(['up', '--shards', '9', '--targets', 'replay', '--repo', 'me/rebound'], {}, st.url)).rejects.toMatchObject({ code: 'RR_ERR_FLEET_FOREIGN_SERVICE', message: expect.stringContaining('"bench-runner-9"') });
    st.failNext('ServiceCreate', 'Free plan resource provision limit exceeded');
    await expect(run(['up', '--shards', '3', '--targets', 'replay', '--repo', 'me/rebound'], { RAILWAY_TOKEN: PROJECT_TOKEN }, st.url)).rejects.toMatchObject({
      code: 'RR_ERR_FLEET_API',
      message: 'Railway API ServiceCreate answered 200 (using RAILWAY_TOKEN as a project token (project-access-token header)): Free plan resource provision limit exceeded',
    });
    await expect(run(['up', '--targets', 'replay', '--repo', 'x/y'], {}, st.url)).rejects.toMatchObject({ code: 'RR_ERR_OPTION_INVALID', message: expect.stringContaining('--shards') });
    await expect(run(['up', '--shards', '1', '--targets', 'nginx', '--repo', 'x/y'], {}, st.url)).rejects.toMatchObject({ message: expect.stringContaining('unknown target nginx') });
    await expect(run(['up', '--shards', '1'], {}, st.url)).rejects.toMatchObject({ message: expect.stringContaining('--repo') });
  });

  it("a re-run with fewer targets deletes the dropped target's URL and key from every runner; hand-added variables stay", async () => {
    expect((await up()).code).toBe(0); // back to both targets (the test above ran a one-target up that stopped half-way)
    const r1 = st.services.find((s) => s.name === 'bench-runner-1')!;
    expect(r1.vars.TARGET_SOCKETIO_CSR_URL).toBe('http://socketio-csr.railway.internal:8080');
    Object.assign(r1.vars, { TARGET_MYAPP_URL: 'http://myapp.railway.internal:3000', FOO: 'bar' });
    st.seen.length = 0;
    const r = await run(['up', '--shards', '2', '--targets', 'replay', '--repo', 'me/rebound'], {}, st.url);
    expect(r.code).toBe(0);
    const deletes = mutations(st).filter(([op]) => op === 'VariableDelete').map(([, v]) => [(v as { serviceId: string }).serviceId, (v as { name: string }).name]);
    const ids = ['bench-runner-1', 'bench-runner-2'].map((n) => st.services.find((s) => s.name === n)!.id);
    expect(deletes).toEqual(ids.flatMap((id) => [[id, 'TARGET_SOCKETIO_CSR_BROADCAST_KEY'], [id, 'TARGET_SOCKETIO_CSR_URL']]));
    expect(r.err).toContain('variables removed (managed by fleet up, no longer in the plan): bench-runner-1: TARGET_SOCKETIO_CSR_BROADCAST_KEY, TARGET_SOCKETIO_CSR_URL; bench-runner-2: ');
    expect(r.err).toContain('updated: bench-runner-1, bench-runner-2');
    expect(Object.keys(r1.vars).filter((k) => k.startsWith('TARGET_')).sort()).toEqual(['TARGET_MYAPP_URL', 'TARGET_REPLAY_BROADCAST_KEY', 'TARGET_REPLAY_URL']);
    expect(r1.vars.FOO).toBe('bar');
    st.seen.length = 0;
    await run(['up', '--shards', '2', '--targets', 'replay', '--repo', 'me/rebound'], {}, st.url);
    expect(mutations(st)).toEqual([]);
  });

  it('down deletes only what up made: labelled fleet names; the hand-made runner and other services stay', async () => {
    st.seen.length = 0;
    const dry = await run(['down', '--dry-run'], {}, st.url);
    expect(dry.out.match(/^# ServiceDelete \(not sent/gm)).toHaveLength(4);
    expect(mutations(st)).toEqual([]);
    const r = await run(['down'], { RAILWAY_TOKEN: PROJECT_TOKEN }, st.url);
    expect(r.out).toBe('deleted: replay, socketio-csr, bench-runner-1, bench-runner-2\n');
    expect(r.err).toContain('kept (no REBOUND_FLEET=bench-runner label, not made by fleet up): bench-runner-9');
    expect(st.services.map((s) => s.name)).toEqual(['postgres', 'bench-runner-9']);
    expect(mutations(st).every(([op]) => op === 'ServiceDelete')).toBe(true);
  });
});
