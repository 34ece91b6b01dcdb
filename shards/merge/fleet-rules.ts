import type { MergePlan } from './plan.ts';
import { num, type FleetFlag, type ShardOutcome } from './types.ts';

/**
 * The runner's own rules, applied again to the merged figures: each shard can pass them alone
 * while the sum does not (two shards counting the same clients, a subscriber judged on the wrong
 * accepted set), and a merged figure over 100% must never read "valid". Runners add theirs through
 * their merge declaration's `rules`.
 */
export function mergedFigureFlags(merged: Record<string, unknown>, plan: MergePlan): FleetFlag[] {
  const flags: FleetFlag[] = [];
  const rate = num(merged.deliveryRatePct);
  const ofConnected = num(merged.deliveryRateOfConnectedPct);
  if ((rate !== undefined && rate > 100) || (ofConnected !== undefined && ofConnected > 100)) {
    flags.push({ code: 'FLEET_DELIVERY_OVER_100', severity: 'fatal', message: `merged delivery rate ${rate ?? '-'}% (of connected clients: ${ofConnected ?? '-'}%) exceeds 100%: some shard's counts are wrong, so no merged figure can be trusted` });
  }
  const expected = num(merged.expectedDeliveries);
  const received = num(merged.receivedDeliveries);
  // Deliveries of messages a publisher saw fail are counted apart (unaccepted): only the rest must fit in expected.
  const unaccepted = num(merged.unacceptedDeliveries) ?? 0;
  if (expected !== undefined && received !== undefined && received - unaccepted > expected) {
    flags.push({ code: 'FLEET_RECEIVED_OVER_EXPECTED', severity: 'fatal', message: `merged received ${received}${unaccepted ? ` (${unaccepted} unaccepted)` : ''} > expected ${expected}: the shards' expected deliveries are understated` });
  }
  const lost = num(merged.lostDeliveries);
  if (expected !== undefined && lost !== undefined && lost > expected) {
    flags.push({ code: 'FLEET_RECEIVED_OVER_EXPECTED', severity: 'fatal', message: `merged lost ${lost} > expected ${expected}` });
  }
  for (const s of plan.specs) flags.push(...(s.rules?.(merged) ?? []));
  const clients = num(merged.clients);
  for (const k of ['connectedClients', 'connected', 'subscribed'] as const) {
    const v = num(merged[k]);
    if (clients !== undefined && v !== undefined && v > clients) flags.push({ code: 'FLEET_CONNECTED_OVER_CLIENTS', severity: 'fatal', message: `merged ${k} ${v} > clients ${clients}` });
  }
  return flags;
}

/**
 * Every shard's own warnings, carried into the fleet's flags under their own code with the shards
 * that raised them (RUNNER_LOOP_LAG on s3 is a fact about s3's machine the merged verdict must
 * show). Fatal ones are SHARD_INVALID already.
 */
export function carriedShardFlags(ok: readonly ShardOutcome[]): FleetFlag[] {
  const byCode = new Map<string, { shards: string[]; messages: string[] }>();
  for (const o of ok) {
    for (const f of o.result?.validity?.flags ?? []) {
      if (f.severity !== 'warning') continue;
      const e = byCode.get(f.code) ?? { shards: [], messages: [] };
      if (!e.shards.includes(o.name)) e.shards.push(o.name);
      e.messages.push(`${o.name}: ${f.message}`);
      byCode.set(f.code, e);
    }
  }
  return [...byCode].map(([code, e]) => ({ code, severity: 'warning' as const, shards: e.shards, message: e.messages.join('; ') }));
}
