import { fireRules, type ValidityRule } from '../../engine/measure/validity.ts';
import type { MergePlan } from './plan.ts';
import { num, type FleetFlag, type ShardOutcome } from './types.ts';

/** A rule over the merged figures (a runner's rule that names shards declares it in its merge `rules`). */
type MergedRule = ValidityRule<Record<string, unknown>>;

/** Every rule over the merged figures is fatal: a merged figure that breaks one cannot be trusted. */
const fatal = (code: string, check: MergedRule['check']): MergedRule => ({ code, severity: 'fatal', check });

const overClients = (k: 'connectedClients' | 'connected' | 'subscribed'): MergedRule =>
  fatal('FLEET_CONNECTED_OVER_CLIENTS', (m) => {
    const clients = num(m.clients);
    const v = num(m[k]);
    return clients !== undefined && v !== undefined && v > clients ? `merged ${k} ${v} > clients ${clients}` : undefined;
  });

/**
 * The runner's own rules, applied again to the merged figures: each shard can pass them alone
 * while the sum does not (two shards counting the same clients, a subscriber judged on the wrong
 * accepted set), and a merged figure over 100% must never read "valid".
 */
export const MERGED_RULES: readonly MergedRule[] = [
  fatal('FLEET_DELIVERY_OVER_100', (m) => {
    const rate = num(m.deliveryRatePct);
    const ofConnected = num(m.deliveryRateOfConnectedPct);
    return (rate !== undefined && rate > 100) || (ofConnected !== undefined && ofConnected > 100) ? `merged delivery rate ${rate ?? '-'}% (of connected clients: ${ofConnected ?? '-'}%) exceeds 100%: some shard's counts are wrong, so no merged figure can be trusted` : undefined;
  }),
  // Deliveries of messages a publisher saw fail are counted apart (unaccepted): only the rest must fit in expected.
  fatal('FLEET_RECEIVED_OVER_EXPECTED', (m) => {
    const expected = num(m.expectedDeliveries);
    const received = num(m.receivedDeliveries);
    const unaccepted = num(m.unacceptedDeliveries) ?? 0;
    return expected !== undefined && received !== undefined && received - unaccepted > expected ? `merged received ${received}${unaccepted ? ` (${unaccepted} unaccepted)` : ''} > expected ${expected}: the shards' expected deliveries are understated` : undefined;
  }),
  fatal('FLEET_RECEIVED_OVER_EXPECTED', (m) => {
    const expected = num(m.expectedDeliveries);
    const lost = num(m.lostDeliveries);
    return expected !== undefined && lost !== undefined && lost > expected ? `merged lost ${lost} > expected ${expected}` : undefined;
  }),
];

/** After the runners' own fleet rules (their merge declarations): no count of connected clients over the clients. */
const CLIENT_RULES: readonly MergedRule[] = (['connectedClients', 'connected', 'subscribed'] as const).map(overClients);

export function mergedFigureFlags(merged: Record<string, unknown>, plan: MergePlan): FleetFlag[] {
  return [...fireRules(MERGED_RULES, merged), ...plan.specs.flatMap((s) => s.rules?.(merged) ?? []), ...fireRules(CLIENT_RULES, merged)];
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
