/**
 * The pusher targets against a real soketi (the local service, services/soketi; skipped
 * with the reason where soketi is not installed): a jitter run through the CLI, target:check, the
 * lean client at 200 connections, and the errors that name what to fix.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliToExit as runCli } from '../../cli/testing.ts';
import { api, startRunner, tempResultsDir } from '../../shards/runner/testing.ts';
import { checkTarget } from '../check/check.ts';
import { withTarget } from '../measure/local-target.ts';
import { getTarget } from './index.ts';
import { LeanClient, LeanStage } from './lean-client.ts';
import { PUSHER_MAX_BATCH, PUSHER_MAX_EVENT_BYTES, pusherApp, pusherPublish } from './pusher.ts';
import { startService, type ServiceHandle } from '../../services/common/spawn.ts';
import { soketiAvailability } from '../../services/soketi/load.ts';
import type { PublishMessage } from './publish.ts';
import type { TargetClient } from './types.ts';

const missing = soketiAvailability().reason;
/** Not soketi's default secret, so a leak of it is unambiguous. */
const SECRET = 's3cret-Zq81-never-shown';
let soketi: ServiceHandle | undefined;
/** soketi's base URL with the app in Pusher's own URL form. */
let appUrl = '';

beforeAll(async () => {
  if (missing) return;
  soketi = await startService('soketi', { env: { SOKETI_DEFAULT_APP_SECRET: SECRET } });
  appUrl = `http://app-key:${SECRET}@127.0.0.1:${soketi.port}/apps/app-id`;
});
afterAll(async () => soketi?.stop());

const msg = (stream: string, seq: number, data = JSON.stringify({ seq, sentAt: Date.now(), runId: 't' })): PublishMessage => ({ stream, data, seq, idempotencyKey: `t:${stream}:${seq}` });
const ctx = (url: string) => ({ url, signal: new AbortController().signal });

async function waitUntil(cond: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(missing)(`pusher target against soketi${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('a jitter run through the CLI is valid, every loss is booked "lost while offline, nothing to resume", and the secret is nowhere in its output', async () => {
    const r = await runCli('cli/jitter.ts', ['--target', 'pusher', '--url', appUrl, '--clients', '16', '--msgs', '60', '--interval', '150', '--jitter', '1', '--jitter-ms', '300', '--settle', '3000', '--seed', '38', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout) as { target: string; validity: { valid: boolean }; lossByCause: Record<string, number>; lostDeliveries: number; published: number; publishFailures: number; reconnects: number };
    expect(res).toMatchObject({ target: 'pusher', published: 60, publishFailures: 0, validity: { valid: true } });
    expect(res.reconnects).toBeGreaterThan(0);
    expect(res.lostDeliveries).toBeGreaterThan(0);
    expect(res.lossByCause).toEqual({ offline_nothing_to_resume: res.lostDeliveries });
    // The secret travels in the URL's userinfo: redacted in the result, the report and the logs.
    const dir = /results: (.*)\/jitter-[^/]*\.json/.exec(r.stderr + r.stdout)?.[1];
    const stored = dir ? readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8')).join('\n') : '';
    expect(stored.length).toBeGreaterThan(0);
    for (const text of [r.stdout, r.stderr, stored]) expect(text).not.toContain(SECRET);
    expect(r.stdout).toContain('***@127.0.0.1');
  });

  it('the runner service serves POST /bench-jitter-pusher from TARGET_PUSHER_URL; its answer carries no secret', async () => {
    const token = 'test-token-0123456789';
    const runner = await startRunner({ TARGET_PUSHER_URL: appUrl, RESULTS_DIR: tempResultsDir(), BENCH_RUNNER_TOKEN: token });
    try {
      const r = await api(runner.url, '/bench-jitter-pusher?clients=8&msgs=40&interval=150&jitter=1&jitterMs=300&settle=3000&seed=5', { method: 'POST', token });
      expect(r.status, JSON.stringify(r.body).slice(0, 500)).toBe(200);
      expect(r.body).toMatchObject({ target: 'pusher', published: 40, validity: { valid: true } });
      expect(JSON.stringify(r.body)).not.toContain(SECRET);
    } finally {
      await runner.stop();
    }
  });

  it('target:check passes every declared capability, library and manual reconnect', async () => {
    for (const name of ['pusher', 'pusher-manual']) {
      const t = getTarget(name);
      const r = await checkTarget({ target: t, url: appUrl });
      expect(r.verdicts.filter((v) => !v.ok && !v.skipped).map((v) => `${name} ${v.step}: ${v.reason}`)).toEqual([]);
      expect(r.verdicts.filter((v) => v.skipped).map((v) => v.step)).toEqual(['whispers']);
      expect(r.ok).toBe(true);
    }
  });

  it('200 lean clients connect, subscribe and each receives a published event byte for byte', async () => {
    const t = getTarget('pusher');
    const stream = 'lean-200';
    const got = new Map<number, string>();
    const clients = Array.from({ length: 200 }, (_, i) => {
      const c = t.createLeanClient!({ index: i, url: appUrl, stream });
      c.on('message', (m) => got.set(i, m.data));
      return c;
    });
    try {
      await Promise.all(clients.map((c) => c.connect()));
      expect(clients.every((c) => c instanceof LeanClient && c.stage === LeanStage.Subscribed)).toBe(true);
      const data = JSON.stringify({ seq: 1, sentAt: Date.now(), runId: 'lean', pad: 'é"\\' });
      await pusherPublish.send(msg(stream, 1, data), ctx(appUrl));
      await waitUntil(() => got.size === 200, 10_000, '200 deliveries');
      expect(new Set(got.values())).toEqual(new Set([data]));
    } finally {
      for (const c of clients) c.close();
    }
  });

  it('npm run bench with the soketi column: one run, no tuned column (pusher-js keeps its own backoff), valid', async () => {
    const r = await runCli('cli/bench.ts', ['--targets', 'soketi', '--clients', '4', '--msgs', '12', '--interval', '300', '--jitter', '0', '--settle', '1000', '--seed', '38', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const runs = JSON.parse(r.stdout) as { target: string; params: { reconnectStrategy: string }; validity: { valid: boolean } }[];
    expect(runs.map((x) => [x.target, x.params.reconnectStrategy, x.validity.valid])).toEqual([['soketi', 'default', true]]);
  });

  it('sendBatch: one signed batch_events call carries up to 10 events, each reaching its own channel byte for byte; a wrong secret refuses the batch', async () => {
    const t = getTarget('pusher');
    const streams = Array.from({ length: PUSHER_MAX_BATCH }, (_, i) => `batch-${i}`);
    const got = new Map<string, string>();
    const clients = streams.map((stream, i) => {
      const c = t.createLeanClient!({ index: i, url: appUrl, stream });
      c.on('message', (m) => got.set(stream, m.data));
      return c;
    });
    try {
      await Promise.all(clients.map((c) => c.connect()));
      const ms = streams.map((s, i) => msg(s, i + 1));
      await pusherPublish.sendBatch!(ms, ctx(appUrl));
      await waitUntil(() => got.size === streams.length, 10_000, 'one delivery per channel');
      for (const m of ms) expect(got.get(m.stream)).toBe(m.data);
      await expect(pusherPublish.sendBatch!(ms, ctx(`http://app-key:wrong-${SECRET.length}@127.0.0.1:${soketi!.port}/apps/app-id`))).rejects.toMatchObject({ code: 'RR_ERR_PUSHER_SECRET' });
    } finally {
      for (const c of clients) c.close();
    }
  });

  it('a wrong app key: connect() fails with RR_ERR_PUSHER_APP_KEY naming PUSHER_APP_KEY, full and lean client', async () => {
    const url = `http://nokey:${SECRET}@127.0.0.1:${soketi!.port}/apps/app-id`;
    const full = getTarget('pusher').createClient({ index: 0, url, stream: 'k' });
    full.on('error', () => {});
    await expect(full.connect()).rejects.toMatchObject({ code: 'RR_ERR_PUSHER_APP_KEY', message: expect.stringMatching(/app key "nokey".*PUSHER_APP_KEY.*4001/) });
    const lean = getTarget('pusher').createLeanClient!({ index: 0, url, stream: 'k' });
    await expect(lean.connect()).rejects.toThrow(/app key refused \(pusher:error 4001.*PUSHER_APP_KEY/);
  });

  it('a wrong secret: each publish is refused with RR_ERR_PUSHER_SECRET naming PUSHER_APP_SECRET, without the secret', async () => {
    const wrong = 'wrong-secret-value';
    const err = await pusherPublish.send(msg('s', 1), ctx(`http://app-key:${wrong}@127.0.0.1:${soketi!.port}/apps/app-id`)).then(() => undefined, (e: unknown) => e as Error & { code?: string });
    expect(err).toMatchObject({ code: 'RR_ERR_PUSHER_SECRET', message: expect.stringContaining('PUSHER_APP_SECRET') });
    expect(err!.message).not.toContain(wrong);
    // An unknown app id is its own refusal; the right credentials publish.
    await expect(pusherPublish.send(msg('s', 1), ctx(`http://app-key:${SECRET}@127.0.0.1:${soketi!.port}/apps/nope`))).rejects.toMatchObject({ code: 'RR_ERR_PUSHER_APP_ID' });
    await expect(pusherPublish.send(msg('s', 1), ctx(appUrl))).resolves.toBeUndefined();
  });

  it('events over 10 KB and streams that are not channel names are refused before anything is sent', async () => {
    await expect(pusherPublish.send(msg('s', 1, 'x'.repeat(PUSHER_MAX_EVENT_BYTES + 1)), ctx(appUrl))).rejects.toMatchObject({ code: 'RR_ERR_PUSHER_EVENT_TOO_LARGE' });
    for (const stream of ['with space', 'x'.repeat(165), 'private-room', 'ünicode']) {
      expect(() => getTarget('pusher').createClient({ index: 0, url: appUrl, stream }), stream).toThrow(expect.objectContaining({ code: 'RR_ERR_PUSHER_CHANNEL' }));
    }
  });
});

describe('pusher target against servers that do not speak Pusher', () => {
  const connectErr = async (url: string): Promise<Error & { code?: string }> => {
    const c: TargetClient = getTarget('pusher').createClient({ index: 0, url, stream: 'x' });
    c.on('error', () => {});
    return c.connect().then(() => {
      c.close();
      throw new Error('connected to a server that is not Pusher');
    }, (e: unknown) => e as Error);
  };

  it("Rebound's ws service (silent until spoken to): RR_ERR_PUSHER_PROTOCOL once pusher-js gives up", async () => {
    const e = await withTarget(getTarget('ws'), undefined, async (url) => {
      // The ws service says nothing until spoken to: no pusher:connection_established before pusher-js gives up (10 s).
      return connectErr(url);
    });
    expect(e).toMatchObject({ code: 'RR_ERR_PUSHER_PROTOCOL', message: expect.stringMatching(/did not speak the Pusher protocol/) });
  }, 30_000);

  it('a plain HTTP server: RR_ERR_PUSHER_PROTOCOL once pusher-js gives up; nothing listening: a plain connect failure', async () => {
    const http: Server = createServer((_q, r) => r.end('hello')).listen(0, '127.0.0.1');
    await new Promise((r) => http.once('listening', r));
    const port = (http.address() as { port: number }).port;
    try {
      const e = await connectErr(`http://127.0.0.1:${port}`);
      expect(e).toMatchObject({ code: 'RR_ERR_PUSHER_PROTOCOL', message: expect.stringContaining('no pusher:connection_established') });
    } finally {
      http.close();
    }
    const down = await connectErr(`http://127.0.0.1:${port}`);
    expect(down.code).toBeUndefined();
    expect(down.message).toMatch(/nothing listens at 127\.0\.0\.1:\d+/);
  }, 40_000);

  it('credentials: URL userinfo and /apps/<id> first, then PUSHER_APP_* env, then soketi defaults; bad ones refused without echoing the secret', () => {
    expect(pusherApp('http://k1:s1@h:7/apps/42', { PUSHER_APP_KEY: 'ek' })).toEqual({ appId: '42', key: 'k1', secret: 's1', host: 'h', port: 7, tls: false });
    expect(pusherApp('https://h', { PUSHER_APP_ID: 'i', PUSHER_APP_KEY: 'k', PUSHER_APP_SECRET: 's' })).toEqual({ appId: 'i', key: 'k', secret: 's', host: 'h', port: 443, tls: true });
    expect(pusherApp('http://h:6001', {})).toMatchObject({ appId: 'app-id', key: 'app-key', secret: 'app-secret' });
    expect(() => pusherApp('http://h', { PUSHER_APP_KEY: 'a/b' })).toThrow(expect.objectContaining({ code: 'RR_ERR_OPTION_INVALID', details: { option: 'PUSHER_APP_KEY' } }));
    const bad = 'has space';
    let thrown: Error | undefined;
    try {
      pusherApp('http://h', { PUSHER_APP_SECRET: bad });
    } catch (e) {
      thrown = e as Error;
    }
    expect(thrown).toMatchObject({ code: 'RR_ERR_OPTION_INVALID', details: { option: 'PUSHER_APP_SECRET' } });
    expect(thrown!.message).not.toContain(bad);
  });
});
