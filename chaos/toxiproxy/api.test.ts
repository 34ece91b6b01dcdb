/**
 * Toxiproxy HTTP API conformance: status codes, error bodies, shapes and listen resolution, as
 * Toxiproxy's api_test.go asserts them. Runs against our embedded proxy, or against a real
 * Toxiproxy when TOXIPROXY_URL is set (tests of our own stricter validation are skipped then).
 */
import { createServer, type AddressInfo } from 'node:net';
import { Toxiproxy } from 'toxiproxy-node-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, startEchoServer, startToxiproxyTarget, targetsEmbedded, uniqueName, type TestTcpServer, type ToxiproxyTarget } from '../testing.ts';

let target: ToxiproxyTarget;
let echo: TestTcpServer;
let client: Toxiproxy;
const created: string[] = [];

beforeAll(async () => {
  target = await startToxiproxyTarget();
  echo = await startEchoServer();
  client = new Toxiproxy(target.url);
});
afterAll(async () => {
  for (const name of created) await fetch(`${target.url}/proxies/${name}`, { method: 'DELETE' });
  await echo.close();
  await target.close();
});

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${target.url}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json: json as Record<string, unknown>, headers: res.headers };
}

/** Create a proxy with a unique name on a free loopback port; deleted after the suite. */
async function proxy(extra: Record<string, unknown> = {}) {
  const name = uniqueName('api');
  created.push(name);
  const res = await api('POST', '/proxies', { name, listen: '127.0.0.1:0', upstream: echo.upstream, ...extra });
  expect(res.status).toBe(201);
  return { name, listen: res.json.listen as string, res };
}

const refused = async (listen: string) => {
  const err = await connect(listen).then(
    (s) => {
      s.destroy();
      return undefined;
    },
    (e: NodeJS.ErrnoException) => e.code,
  );
  return err === 'ECONNREFUSED';
};

const expectError = (res: { status: number; text: string }, status: number, message: string | RegExp) => {
  expect(res.status).toBe(status);
  const body = JSON.parse(res.text) as { error: string; status: number };
  expect(body.status).toBe(status);
  if (typeof message === 'string') expect(body.error).toBe(message);
  else expect(body.error).toMatch(message);
};

describe('server', () => {
  it('GET /version answers {"version": "..."} with a newline, via the npm client too', async () => {
    const res = await api('GET', '/version');
    expect(res.status).toBe(200);
    expect(res.text).toMatch(/^\{"version": "[^"]+"\}\n$/);
    expect(await client.getVersion()).toBe(res.text);
  });

  it('every response carries X-Toxiproxy-Request-Id; a browser user agent gets 403', async () => {
    const ok = await api('GET', '/proxies', undefined, { 'User-Agent': 'Wget/2.1' });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-toxiproxy-request-id')).toBeTruthy();
    const browser = await api('GET', '/proxies', undefined, { 'User-Agent': 'Mozilla/5.0 (X11)' });
    expect(browser.status).toBe(403);
    expect(browser.text.trim()).toBe('User agent not allowed');
  });

  it('unknown path is 404 plain text; known path with wrong method is 405', async () => {
    const res = await api('GET', '/nope');
    expect(res.status).toBe(404);
    expect(res.text).toBe('404 page not found\n');
    expect((await api('PUT', '/proxies')).status).toBe(405);
  });
});

describe('proxies', () => {
  it('create → 201 with the bound listen address, exact field order, no toxics', async () => {
    const { name, listen, res } = await proxy();
    expect(listen).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(Number(listen.split(':')[1])).toBeGreaterThan(0);
    expect(res.json).toMatchObject({ name, upstream: echo.upstream, enabled: true, toxics: [] });
    expect(Object.keys(res.json).filter((k) => k !== 'Logger')).toEqual(['name', 'listen', 'upstream', 'enabled', 'toxics']);
    const s = await connect(listen);
    s.destroy();
  });

  it('localhost:0 resolves to 127.0.0.1:<port> through the npm client', async () => {
    const name = uniqueName('localhost');
    created.push(name);
    const p = await client.createProxy({ name, listen: 'localhost:0', upstream: echo.upstream });
    expect(p.listen).toMatch(/^127\.0\.0\.1:[1-9]\d*$/);
    expect(p.enabled).toBe(true);
  });

  // Toxiproxy binds every interface; Rebound does too only with allowPublic, else 127.0.0.1 (exposure.test.ts covers both).
  it('wildcard listens (":0", "0.0.0.0:0") bind every interface (Rebound: 127.0.0.1 unless --allow-public) and report the bound port', async () => {
    for (const listen of [':0', '0.0.0.0:0']) {
      const { listen: bound } = await proxy({ listen });
      expect(bound, listen).toMatch(target.rebound ? /^(\[::\]|0\.0\.0\.0|127\.0\.0\.1):[1-9]\d*$/ : /^(\[::\]|0\.0\.0\.0):[1-9]\d*$/);
      (await connect(`127.0.0.1:${bound.split(':').at(-1)}`)).destroy();
    }
  });

  it('a listen without a port is a 500 listen error', async () => {
    const res = await api('POST', '/proxies', { name: uniqueName('noport'), listen: 'local373', upstream: echo.upstream });
    expect(res.status).toBe(500);
    expect(JSON.parse(res.text).status).toBe(500);
  });

  it('created disabled: listen kept verbatim, nothing bound', async () => {
    const free = await freePort();
    const { listen, res } = await proxy({ listen: `localhost:${free}`, enabled: false });
    expect(listen).toBe(`localhost:${free}`);
    expect(res.json.enabled).toBe(false);
    expect(await refused(`127.0.0.1:${free}`)).toBe(true);
  });

  it('GET /proxies is an object keyed by name; GET /proxies/{name} returns the proxy', async () => {
    const { name, listen } = await proxy();
    const all = await api('GET', '/proxies');
    expect(all.status).toBe(200);
    expect(Array.isArray(all.json)).toBe(false);
    expect(all.json[name]).toMatchObject({ name, listen, enabled: true });
    const one = await client.get(name);
    expect(one.listen).toBe(listen);
    expect((await client.getAll())[name]?.upstream).toBe(echo.upstream);
  });

  it('missing name / upstream → 400 with Toxiproxy error bodies (text/plain, trailing newline)', async () => {
    const noName = await api('POST', '/proxies', { listen: '127.0.0.1:0', upstream: echo.upstream });
    expectError(noName, 400, 'missing required field: name');
    expect(noName.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(noName.text.endsWith('}\n')).toBe(true);
    expectError(await api('POST', '/proxies', { name: uniqueName('x'), listen: '127.0.0.1:0' }), 400, 'missing required field: upstream');
  });

  it('malformed JSON, wrong JSON types and empty bodies → 400 bad request body', async () => {
    expectError(await api('POST', '/proxies', '{bad'), 400, /^bad request body/);
    expectError(await api('POST', '/proxies', '[1,2]'), 400, /^bad request body/);
    expectError(await api('POST', '/proxies', { name: 5, upstream: echo.upstream }), 400, /^bad request body/);
    expectError(await api('POST', '/proxies', ''), 400, /^bad request body/);
  });

  it('a body is read as its first JSON value: anything after it is ignored (create, update, populate, toxics)', async () => {
    const name = uniqueName('trail');
    created.push(name);
    const made = await api('POST', '/proxies', `${JSON.stringify({ name, listen: '127.0.0.1:0', upstream: echo.upstream })}garbage{`);
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({ name, upstream: echo.upstream, enabled: true });
    const updated = await api('POST', `/proxies/${name}`, '{"enabled":false}}} not json');
    expect(updated.status).toBe(200);
    expect(updated.json.enabled).toBe(false);
    const toxic = await api('POST', `/proxies/${name}/toxics`, '{"type":"latency","attributes":{"latency":5}}{"type":"bogus"}');
    expect(toxic.status).toBe(200);
    expect(toxic.json).toMatchObject({ name: 'latency_downstream', type: 'latency', attributes: { latency: 5 } });
    const popName = uniqueName('trailpop');
    created.push(popName);
    const pop = await api('POST', '/populate', `[${JSON.stringify({ name: popName, listen: '127.0.0.1:0', upstream: echo.upstream })}]trailing`);
    expect(pop.status).toBe(201);
    expect((pop.json.proxies as Array<{ name: string }>).map((p) => p.name)).toEqual([popName]);
  });

  it("bad JSON → 400 with Go's decoder message after `bad request body: `", async () => {
    const cases: Array<[string, string]> = [
      ['', 'EOF'],
      ['   ', 'EOF'],
      ['{bad', "invalid character 'b' looking for beginning of object key string"],
      ['{"name":', 'unexpected EOF'],
      ['{"name":"x" "upstream":"y"}', `invalid character '"' after object key:value pair`],
      ['{"name" "x"}', `invalid character '"' after object key`],
      ['nope', "invalid character 'o' in literal null (expecting 'u')"],
      ['x{}', "invalid character 'x' looking for beginning of value"],
      ['{"name":-}', "invalid character '}' in numeric literal"],
      ['{"name":"a\\q"}', "invalid character 'q' in string escape code"],
      ['['.repeat(10_001), "invalid character '[' exceeded max depth"],
    ];
    for (const [body, why] of cases) expectError(await api('POST', '/proxies', body), 400, `bad request body: ${why}`);
    const { name } = await proxy();
    expectError(await api('POST', `/proxies/${name}`, '{"enabled":tru}'), 400, "bad request body: invalid character '}' in literal true (expecting 'e')");
    expectError(await api('POST', `/proxies/${name}/toxics`, '{"type":"latency",}'), 400, "bad request body: invalid character '}' looking for beginning of object key string");
    const pop = await api('POST', '/populate', '[{"name":"a","upstream":"b"},]');
    expect(pop.status).toBe(400);
    expect(pop.json.error).toBe("bad request body: invalid character ']' looking for beginning of value");
  });

  it('duplicate name → 409 proxy already exists (npm client: status code 409)', async () => {
    const { name } = await proxy();
    expectError(await api('POST', '/proxies', { name, listen: '127.0.0.1:0', upstream: echo.upstream }), 409, 'proxy already exists');
    await expect(client.createProxy({ name, listen: '127.0.0.1:0', upstream: echo.upstream })).rejects.toThrow('Request failed with status code 409');
  });

  it('port conflict → 500 with the bind error', async () => {
    const { listen } = await proxy();
    const res = await api('POST', '/proxies', { name: uniqueName('conflict'), listen, upstream: echo.upstream });
    expectError(res, 500, /address already in use/);
  });

  it('unknown proxy → 404 proxy not found on get, update, delete and toxics', async () => {
    const ghost = uniqueName('ghost');
    for (const [method, path, body] of [
      ['GET', `/proxies/${ghost}`],
      ['POST', `/proxies/${ghost}`, { enabled: false }],
      ['PATCH', `/proxies/${ghost}`, { enabled: false }],
      ['DELETE', `/proxies/${ghost}`],
      ['GET', `/proxies/${ghost}/toxics`],
      ['POST', `/proxies/${ghost}/toxics`, { type: 'latency' }],
      ['GET', `/proxies/${ghost}/toxics/t`],
      ['DELETE', `/proxies/${ghost}/toxics/t`],
    ] as const) {
      expectError(await api(method, path, body), 404, 'proxy not found');
    }
    await expect(client.get(ghost)).rejects.toThrow('Request failed with status code 404');
  });

  it('update by POST (npm client) and PATCH: disable closes the listener, enable rebinds the same address', async () => {
    const { name, listen } = await proxy();
    const p = await client.get(name);
    const off = await p.update({ enabled: false, listen: p.listen, upstream: p.upstream });
    expect(off.enabled).toBe(false);
    expect(off.listen).toBe(listen);
    expect(await refused(listen)).toBe(true);
    const on = await api('PATCH', `/proxies/${name}`, { enabled: true });
    expect(on.status).toBe(200);
    expect(on.json).toMatchObject({ enabled: true, listen });
    (await connect(listen)).destroy();
  });

  it('update with an equivalent hostname (localhost:N for 127.0.0.1:N) is not a restart', async () => {
    const { name, listen } = await proxy();
    const s = await connect(listen);
    const port = listen.split(':')[1];
    const res = await api('POST', `/proxies/${name}`, { listen: `localhost:${port}` });
    expect(res.status).toBe(200);
    expect(res.json.listen).toBe(listen);
    s.write('still-open');
    const got = await new Promise<string>((resolve, reject) => {
      s.once('data', (d) => resolve(d.toString()));
      s.once('close', () => reject(new Error('connection was closed by the update')));
    });
    expect(got).toBe('still-open');
    s.destroy();
  });

  it('update body errors: empty → 400, wrong type → 400', async () => {
    const { name } = await proxy();
    expectError(await api('POST', `/proxies/${name}`, ''), 400, /^bad request body/);
    expectError(await api('PATCH', `/proxies/${name}`, { enabled: 'yes' }), 400, /^bad request body/);
  });

  it('delete → 204 empty, port released, second delete → 404', async () => {
    const { name, listen } = await proxy();
    const del = await api('DELETE', `/proxies/${name}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect(await refused(listen)).toBe(true);
    expectError(await api('DELETE', `/proxies/${name}`), 404, 'proxy not found');
  });
});

describe('populate and reset', () => {
  it('populate → 201 {"proxies":[...]} in input order, all listening', async () => {
    const a = uniqueName('popA');
    const b = uniqueName('popB');
    created.push(a, b);
    const res = await api('POST', '/populate', [
      { name: a, listen: '127.0.0.1:0', upstream: echo.upstream },
      { name: b, listen: '127.0.0.1:0', upstream: echo.upstream, enabled: false },
    ]);
    expect(res.status).toBe(201);
    const list = res.json.proxies as Array<{ name: string; listen: string; enabled: boolean }>;
    expect(list.map((p) => p.name)).toEqual([a, b]);
    expect(list[0]!.enabled).toBe(true);
    expect(list[1]!.enabled).toBe(false);
    (await connect(list[0]!.listen)).destroy();
    const viaClient = await client.populate([{ name: a, listen: list[0]!.listen, upstream: echo.upstream }]);
    expect(viaClient[a]?.listen).toBe(list[0]!.listen);
  });

  it('populate keeps an existing proxy (same resolved listen) with its toxics; replaces a changed one', async () => {
    const kept = await proxy();
    const changed = await proxy();
    await api('POST', `/proxies/${kept.name}/toxics`, { name: 'keepme', type: 'latency', attributes: { latency: 1 } });
    await api('POST', `/proxies/${changed.name}/toxics`, { name: 'dropme', type: 'latency', attributes: { latency: 1 } });
    const res = await api('POST', '/populate', [
      { name: kept.name, listen: `localhost:${kept.listen.split(':')[1]}`, upstream: echo.upstream },
      { name: changed.name, listen: '127.0.0.1:0', upstream: echo.upstream },
    ]);
    expect(res.status).toBe(201);
    const [k, c] = res.json.proxies as Array<{ listen: string; toxics: Array<{ name: string }> }>;
    expect(k!.listen).toBe(kept.listen);
    expect(k!.toxics.map((t) => t.name)).toEqual(['keepme']);
    expect(c!.listen).not.toBe(changed.listen);
    expect(c!.listen).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(c!.toxics).toEqual([]);
  });

  it('populate validates every entry first: missing name at proxy 2 → 400, nothing created', async () => {
    const first = uniqueName('valid');
    const res = await api('POST', '/populate', [{ name: first, listen: '127.0.0.1:0', upstream: echo.upstream }, { listen: '127.0.0.1:0', upstream: echo.upstream }]);
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('missing required field: name at proxy 2');
    expect((await api('GET', `/proxies/${first}`)).status).toBe(404);
    const noUp = await api('POST', '/populate', [{ name: first, listen: '127.0.0.1:0' }]);
    expect(noUp.json.error).toBe('missing required field: upstream at proxy 1');
  });

  it('populate stops at the first bind failure; earlier proxies stay, later ones are not created', async () => {
    const [a, b, c] = [uniqueName('p1'), uniqueName('p2'), uniqueName('p3')];
    created.push(a, b, c);
    const res = await api('POST', '/populate', [
      { name: a, listen: '127.0.0.1:0', upstream: echo.upstream },
      { name: b, listen: 'local373', upstream: echo.upstream },
      { name: c, listen: '127.0.0.1:0', upstream: echo.upstream },
    ]);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(typeof res.json.error).toBe('string');
    expect((res.json.proxies as Array<{ name: string }>).map((p) => p.name)).toEqual([a]);
    expect((await api('GET', `/proxies/${a}`)).status).toBe(200);
    expect((await api('GET', `/proxies/${c}`)).status).toBe(404);
  });

  it('populate with an empty array → 201 {"proxies": null} (Go serialises an empty slice as null)', async () => {
    const res = await api('POST', '/populate', []);
    expect(res.status).toBe(201);
    expect(res.json).toEqual({ proxies: null });
  });

  it('populate with a non-array body → 400 bad request body', async () => {
    const res = await api('POST', '/populate', { proxies: [] });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/^bad request body/);
  });

  it('reset → 204: disabled proxies re-enabled, every toxic removed, proxies kept', async () => {
    const { name, listen } = await proxy();
    await api('POST', `/proxies/${name}/toxics`, { type: 'latency', stream: 'upstream', attributes: { latency: 10 } });
    await api('POST', `/proxies/${name}`, { enabled: false });
    await client.reset();
    const after = await api('GET', `/proxies/${name}`);
    expect(after.json).toMatchObject({ name, listen, enabled: true, toxics: [] });
    (await connect(listen)).destroy();
    const raw = await api('POST', '/reset');
    expect(raw.status).toBe(204);
    expect(raw.text).toBe('');
  });
});

describe('toxics', () => {
  it('create → 200 with defaults: stream downstream, toxicity 1, name <type>_<stream>, zero attributes', async () => {
    const { name } = await proxy();
    const res = await api('POST', `/proxies/${name}/toxics`, { type: 'latency' });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ attributes: { latency: 0, jitter: 0 }, name: 'latency_downstream', type: 'latency', stream: 'downstream', toxicity: 1 });
    expect(Object.keys(res.json)).toEqual(['attributes', 'name', 'type', 'stream', 'toxicity']);
    const up = await api('POST', `/proxies/${name}/toxics`, { type: 'latency', stream: 'upstream' });
    expect(up.json.name).toBe('latency_upstream');
  });

  it('through the npm client: add, get (attributes and toxicity read back), remove', async () => {
    const { name } = await proxy();
    const p = await client.get(name);
    const t = await p.addToxic<{ latency: number; jitter: number }>({ name: 'lag', type: 'latency', stream: 'downstream', toxicity: 0.2, attributes: { latency: 100, jitter: 10 } });
    expect(t).toMatchObject({ name: 'lag', type: 'latency', stream: 'downstream', attributes: { latency: 100, jitter: 10 } });
    expect(t.toxicity).toBeCloseTo(0.2, 5);
    const again = await p.getToxic<{ latency: number }>('lag');
    expect(again.attributes.latency).toBe(100);
    await again.remove();
    await expect(p.getToxic('lag')).rejects.toThrow('Request failed with status code 404');
  });

  it('all toxic types are accepted with their attribute sets; noop defaults to downstream', async () => {
    const { name } = await proxy();
    const cases: Array<[string, Record<string, number>]> = [
      ['latency', { latency: 5, jitter: 1 }],
      ['bandwidth', { rate: 100 }],
      ['slow_close', { delay: 10 }],
      ['timeout', { timeout: 0 }],
      ['reset_peer', { timeout: 0 }],
      ['slicer', { average_size: 10, size_variation: 2, delay: 5 }],
      ['limit_data', { bytes: 1000 }],
    ];
    for (const [type, attributes] of cases) {
      const res = await api('POST', `/proxies/${name}/toxics`, { type, stream: 'upstream', attributes });
      expect(res.status, type).toBe(200);
      expect(res.json.attributes, type).toEqual(attributes);
    }
    const noop = await api('POST', `/proxies/${name}/toxics`, { type: 'noop' });
    expect(noop.json).toMatchObject({ name: 'noop_downstream', stream: 'downstream' });
  });

  it('list: upstream toxics first, then downstream, each in insertion order', async () => {
    const { name } = await proxy();
    await api('POST', `/proxies/${name}/toxics`, { name: 'd1', type: 'noop' });
    await api('POST', `/proxies/${name}/toxics`, { name: 'u1', type: 'noop', stream: 'upstream' });
    await api('POST', `/proxies/${name}/toxics`, { name: 'd2', type: 'noop' });
    await api('POST', `/proxies/${name}/toxics`, { name: 'u2', type: 'noop', stream: 'upstream' });
    const list = await api('GET', `/proxies/${name}/toxics`);
    expect((list.json as unknown as Array<{ name: string }>).map((t) => t.name)).toEqual(['u1', 'u2', 'd1', 'd2']);
    const p = await api('GET', `/proxies/${name}`);
    expect((p.json.toxics as Array<{ name: string }>).map((t) => t.name)).toEqual(['u1', 'u2', 'd1', 'd2']);
    const fresh = await proxy();
    expect((await api('GET', `/proxies/${fresh.name}/toxics`)).json).toEqual([]);
  });

  it('update merges attributes and keeps toxicity unless given; name/type/stream in the body are ignored', async () => {
    const { name } = await proxy();
    await api('POST', `/proxies/${name}/toxics`, { name: 'lag', type: 'latency', toxicity: 0.5, attributes: { latency: 100, jitter: 10 } });
    const upd = await api('POST', `/proxies/${name}/toxics/lag`, { name: 'other', type: 'bandwidth', stream: 'upstream', attributes: { latency: 1000 } });
    expect(upd.status).toBe(200);
    expect(upd.json).toEqual({ attributes: { latency: 1000, jitter: 10 }, name: 'lag', type: 'latency', stream: 'downstream', toxicity: 0.5 });
    const patch = await api('PATCH', `/proxies/${name}/toxics/lag`, { toxicity: 1 });
    expect(patch.json).toMatchObject({ toxicity: 1, attributes: { latency: 1000, jitter: 10 } });
    const viaClient = await (await client.get(name)).getToxic<{ latency: number; jitter: number }>('lag');
    const updated = await viaClient.update({ ...viaClient.toJson(), attributes: { latency: 7, jitter: 10 } });
    expect(updated.attributes.latency).toBe(7);
  });

  it('duplicate toxic name → 409, also across streams', async () => {
    const { name } = await proxy();
    await api('POST', `/proxies/${name}/toxics`, { name: 'dup', type: 'latency', stream: 'downstream' });
    expectError(await api('POST', `/proxies/${name}/toxics`, { name: 'dup', type: 'bandwidth', stream: 'downstream' }), 409, 'toxic already exists');
    expectError(await api('POST', `/proxies/${name}/toxics`, { name: 'dup', type: 'latency', stream: 'upstream' }), 409, 'toxic already exists');
  });

  it('invalid stream, unknown type (including "down"), bad attributes → 400', async () => {
    const { name } = await proxy();
    expectError(await api('POST', `/proxies/${name}/toxics`, { type: 'latency', stream: 'walrustream' }), 400, 'stream was invalid, can be either upstream or downstream');
    expectError(await api('POST', `/proxies/${name}/toxics`, { type: 'latency', stream: '' }), 400, 'stream was invalid, can be either upstream or downstream');
    expectError(await api('POST', `/proxies/${name}/toxics`, { type: 'down' }), 400, 'invalid toxic type');
    expectError(await api('POST', `/proxies/${name}/toxics`, { stream: 'upstream' }), 400, 'invalid toxic type');
    expectError(await api('POST', `/proxies/${name}/toxics`, { type: 'latency', attributes: { latency: 'slow' } }), 400, /^bad request body/);
    expectError(await api('POST', `/proxies/${name}/toxics`, { type: 'latency', attributes: { latency: 1.5 } }), 400, /^bad request body/);
    expectError(await api('POST', `/proxies/${name}/toxics`, '{"type":'), 400, /^bad request body/);
  });

  it('unknown toxic → 404 toxic not found on get, update and delete; delete → 204', async () => {
    const { name } = await proxy();
    expectError(await api('GET', `/proxies/${name}/toxics/nope`), 404, 'toxic not found');
    expectError(await api('POST', `/proxies/${name}/toxics/nope`, { toxicity: 1 }), 404, 'toxic not found');
    expectError(await api('DELETE', `/proxies/${name}/toxics/nope`), 404, 'toxic not found');
    await api('POST', `/proxies/${name}/toxics`, { name: 'gone', type: 'noop' });
    const del = await api('DELETE', `/proxies/${name}/toxics/gone`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
  });

  it.runIf(targetsEmbedded)('ours: values that crash or mean nothing in Toxiproxy are refused with 400', async () => {
    const { name } = await proxy();
    const bad: Array<Record<string, unknown>> = [
      { type: 'latency', attributes: { latency: -1 } },
      { type: 'latency', attributes: { jitter: -5 } },
      { type: 'bandwidth', attributes: { rate: -1 } },
      { type: 'slicer', attributes: { average_size: 0 } },
      { type: 'slicer' },
      { type: 'timeout', attributes: { timeout: -1 } },
      { type: 'limit_data', attributes: { bytes: -1 } },
      { type: 'latency', toxicity: 1.5 },
      { type: 'latency', toxicity: -0.1 },
    ];
    for (const body of bad) expectError(await api('POST', `/proxies/${name}/toxics`, body), 400, /^bad request body/);
    await api('POST', `/proxies/${name}/toxics`, { name: 'ok', type: 'latency', attributes: { latency: 10 } });
    expectError(await api('POST', `/proxies/${name}/toxics/ok`, { attributes: { latency: -10 } }), 400, /^bad request body/);
    expect((await api('GET', `/proxies/${name}/toxics/ok`)).json.attributes).toEqual({ latency: 10, jitter: 0 });
  });

  it.runIf(targetsEmbedded)('ours: durations above 2^31-1 ms (Node would fire the timer after 1 ms) are refused with 400 naming the attribute', async () => {
    const { name } = await proxy();
    const BIG = 2 ** 31;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: 'timeout', stream: 'upstream', attributes: { timeout: 3_000_000_000 } }, 'timeout'],
      [{ type: 'reset_peer', attributes: { timeout: BIG } }, 'timeout'],
      [{ type: 'latency', attributes: { latency: BIG } }, 'latency'],
      [{ type: 'latency', attributes: { jitter: BIG } }, 'jitter'],
      [{ type: 'latency', attributes: { latency: 2 ** 30, jitter: 2 ** 30 } }, 'latency + jitter'],
      [{ type: 'slow_close', attributes: { delay: BIG } }, 'delay'],
      [{ type: 'slicer', attributes: { average_size: 1, delay: BIG * 1000 } }, 'delay'],
    ];
    for (const [body, attr] of cases) {
      const res = await api('POST', `/proxies/${name}/toxics`, body);
      expectError(res, 400, new RegExp(`^bad request body: attributes? ${attr.replace('+', '\\+')} of ${String(body.type)} must be <=`));
    }
    expect((await api('GET', `/proxies/${name}/toxics`)).json).toEqual([]);
    // The bound itself is honoured, and an update past it is refused and not applied.
    await api('POST', `/proxies/${name}/toxics`, { name: 'edge', type: 'timeout', attributes: { timeout: 2 ** 31 - 1 } });
    expectError(await api('PATCH', `/proxies/${name}/toxics/edge`, { attributes: { timeout: BIG } }), 400, /attribute timeout of timeout must be <= 2147483647 ms/);
    expect((await api('GET', `/proxies/${name}/toxics/edge`)).json.attributes).toEqual({ timeout: 2 ** 31 - 1 });
  });

  it('garbage on every endpoint never takes the server down', async () => {
    const { name } = await proxy();
    const bodies = ['', 'null', '[]', '{}', '"x"', '{"name":{}}', '{"attributes":[]}', '\u0000\u0001', '{"toxicity":"1"}', '1e999'];
    const paths = ['/proxies', '/populate', `/proxies/${name}`, `/proxies/${name}/toxics`, `/proxies/${name}/toxics/x`];
    for (const path of paths) {
      for (const body of bodies) {
        const res = await api('POST', path, body);
        expect([200, 201, 400, 404, 409, 500], `${path} ${JSON.stringify(body)}`).toContain(res.status);
      }
    }
    expect((await api('GET', '/version')).status).toBe(200);
  });
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}
