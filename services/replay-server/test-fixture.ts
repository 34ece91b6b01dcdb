import { afterAll, afterEach, beforeAll } from 'vitest';
import { connectRaw, startTestRedis, startTestServer, type RawClient, type TestRedis, type TestServer } from './testing.ts';

/**
 * For test files only (it registers an afterEach): replay servers on port 0 and raw clients a
 * test opens, all closed after each test — clients first, then servers, then anything handed to
 * `closeLater` — so no test leaks sockets into the next.
 */
export function useTestServers() {
  const servers: TestServer[] = [];
  const clients: RawClient[] = [];
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    for (const s of servers.splice(0)) await s.close();
    for (const close of closers.splice(0)) await close();
  });
  return {
    /** Closed after the test: push clients or servers opened some other way. */
    servers,
    clients,
    closeLater: (close: () => unknown) => void closers.push(close),
    start: async (...a: Parameters<typeof startTestServer>) => {
      const t = await startTestServer(...a);
      servers.push(t);
      return t;
    },
    open: async (url: string) => {
      const x = await connectRaw(url);
      clients.push(x.c);
      return x;
    },
  };
}

/** For test files only: one real redis-server for the whole file (beforeAll/afterAll); read `.url` inside tests. */
export function useSuiteRedis(): { readonly url: string } {
  let redis: TestRedis | undefined;
  beforeAll(async () => {
    redis = await startTestRedis();
  });
  afterAll(async () => {
    await redis?.close();
  });
  return {
    get url() {
      if (!redis) throw new Error('useSuiteRedis: Redis is started in beforeAll');
      return redis.url;
    },
  };
}
