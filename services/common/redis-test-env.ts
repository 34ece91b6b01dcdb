import { afterAll, beforeAll } from 'vitest';
import { startTestRedis } from './redis-testing.ts';

/**
 * For a whole test file: its own redis-server, exported as REDIS_URL so the services the runners
 * start as child processes inherit it; the previous value is restored and the server stopped after.
 */
export function useTestRedisEnv(): void {
  let close: (() => Promise<void>) | undefined;
  const saved = process.env.REDIS_URL;
  beforeAll(async () => {
    const redis = await startTestRedis();
    close = () => redis.close();
    process.env.REDIS_URL = redis.url;
  });
  afterAll(async () => {
    if (saved === undefined) delete process.env.REDIS_URL;
    else process.env.REDIS_URL = saved;
    await close?.();
  });
}
