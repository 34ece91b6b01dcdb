import { serverWorkersOf } from '../target.ts';
import type { ScenarioContext, ScenarioValidityFlag } from '../types.ts';
import { LoaderGroup } from './loaders.ts';
import { startNodes, type TargetNodes } from './nodes.ts';
import { subscribeFlag } from './rig.ts';

export interface LoadShape {
  connections: number;
  streams: number;
  loaders: number;
  nodes: number;
  connectConcurrency: number;
}

/**
 * Start the target (or use ctx.url), open the connections over the loaders, run `fn`, and always
 * close both. `streams` names the run's streams; connection i subscribes to stream i % S.
 */
export async function withLoad<T>(ctx: ScenarioContext, shape: LoadShape, runId: string, fn: (fleet: LoaderGroup, nodes: TargetNodes, streams: string[], openFlags: ScenarioValidityFlag[]) => Promise<T>): Promise<T> {
  const nodes = await startNodes(ctx.target, { ...(ctx.url ? { url: ctx.url } : {}), nodes: ctx.nodes ?? shape.nodes, workers: serverWorkersOf(ctx) });
  try {
    const streams = Array.from({ length: shape.streams }, (_, i) => `cap-${runId}-${i}`);
    const fleet = await LoaderGroup.open({ target: ctx.target.name, urls: nodes.urls, streams, connections: shape.connections, loaders: shape.loaders, concurrency: shape.connectConcurrency });
    try {
      const r = fleet.ready;
      ctx.log(`${ctx.target.name}: ${r.subscribed}/${r.requested} subscribed over ${shape.loaders} loaders on ${nodes.urls.length} node(s) in ${r.connectMs} ms${r.failed ? ` (${r.failed} failed: ${JSON.stringify(r.failureCauses)})` : ''}`);
      const flag = subscribeFlag(r, 99);
      return await fn(fleet, nodes, streams, flag ? [flag] : []);
    } finally {
      await fleet.close();
    }
  } finally {
    await nodes.close();
  }
}
