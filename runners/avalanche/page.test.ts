import { describe, expect, it } from 'vitest';
import { herdInput } from './page.ts';
import type { AvalancheResult } from './result.ts';

describe('avalanche report model', () => {
  it('turns the herd series into the herd chart\'s counts, from the restart on, with the server-up marker', () => {
    const r = {
      target: 'ws',
      initiallyConnected: 200,
      herd: { series: [{ tMs: -10, connected: 200, reconnectedPct: 100 }, { tMs: 0, connected: 200, reconnectedPct: 100 }, { tMs: 250, connected: 0, reconnectedPct: 0 }, { tMs: 500, connected: 100, reconnectedPct: 50 }] },
      restart: { startedAtMs: 1000, nodes: [{ listeningAt: 1300 }, { listeningAt: 1450 }] },
    } as unknown as AvalancheResult;
    expect(herdInput(r)).toEqual({ label: 'ws', clients: 200, tMs: [0, 250, 500], reconnected: [200, 0, 100], serverUpAtMs: 450 });
  });
});
