/** Tests' name for the local redis-server the runners start (services/common/redis-process.ts). */
export { startRedisProcess as startTestRedis, type RedisProcess as TestRedis } from './redis-process.ts';
