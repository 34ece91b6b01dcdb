import { startRedisProcess, type RedisProcess } from '../../../services/common/redis-process.ts';
import { LocalNodes } from '../../../engine/measure/local-nodes.ts';
import { watchTarget } from '../../../engine/measure/target-usage.ts';
import type { TargetDefinition } from '../../../engine/targets/types.ts';
import { invalidOption } from '../lists.ts';

/**
 * The target under load: an already running URL, or N local nodes of its service, each as
 * `workers` processes behind one port when asked (the suite's serverWorkers). N > 1 only for
 * Redis-backed targets (nodes share nothing otherwise): connections spread over the nodes and
 * publishes go to any node, so every delivery to another node's subscriber crosses Redis. With
 * no REDIS_URL set, a private redis-server is started for the run.
 */
export interface TargetNodes {
  urls: string[];
  pids: number[];
  /** Processes serving behind each node's port (its --workers; 1 for one process or a URL). */
  workersPerNode: number;
  /** How the target's server takes a message (its definition's `publish`; absent: `/_broadcast`). */
  publish?: TargetDefinition['publish'];
  close(): Promise<void>;
}

export async function startNodes(target: TargetDefinition, o: { url?: string; nodes: number; workers?: number }): Promise<TargetNodes> {
  const publish = target.publish ? { publish: target.publish } : {};
  if (o.url) return { urls: [o.url.replace(/\/+$/, '')], pids: [], workersPerNode: 1, ...publish, close: async () => undefined };
  if (!target.service) throw invalidOption('url', `target "${target.name}" has no local service: pass a url`);
  if (o.nodes > 1 && !target.needsRedis) throw invalidOption('nodes', `nodes=${o.nodes} needs a Redis-backed target (e.g. replay-redis); "${target.name}" nodes would share nothing`);
  let redis: RedisProcess | undefined;
  let redisUrl = process.env.REDIS_URL;
  if (target.needsRedis && !redisUrl) {
    redis = await startRedisProcess();
    redisUrl = redis.url;
  }
  try {
    const nodes = await LocalNodes.start(target, o.nodes, { ...(o.workers ? { workers: o.workers } : {}), ...(redisUrl ? { env: { REDIS_URL: redisUrl } } : {}) });
    return {
      urls: nodes.urls,
      pids: nodes.handles.map((h) => h.pid),
      workersPerNode: Math.max(1, o.workers ?? 1),
      ...publish,
      close: async () => {
        await nodes.close();
        await redis?.close();
      },
    };
  } catch (err) {
    await redis?.close();
    throw err;
  }
}

/** CPU (sum over nodes, % of one core, mean over the step) and RSS (sum, peak) of the target's processes. */
export function watchNodes(pids: readonly number[], intervalMs = 500) {
  const ws = pids.map((p) => watchTarget(p, intervalMs));
  return {
    stop(): { cpuPct: number | null; rssMb: number | null } {
      const us = ws.map((w) => w.stop(Date.now())).filter((u) => u !== null);
      if (!us.length) return { cpuPct: null, rssMb: null };
      const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
      return { cpuPct: Math.round(us.reduce((a, u) => a + mean(u.cpuPct), 0) * 10) / 10, rssMb: Math.round(us.reduce((a, u) => a + Math.max(0, ...u.rssMb), 0) * 10) / 10 };
    },
  };
}
