import { describe, expect, it } from 'vitest';
import { checkRestartValidity, type RestartValidityInput } from './validity.ts';

const base: RestartValidityInput = {
  clients: 100,
  connectedClients: 100,
  connectFailures: 0,
  totalMessages: 100,
  published: 90,
  expectedDeliveries: 10_000,
  receivedDeliveries: 9000,
  deliveryRatePct: 90,
  deliveryRateOfConnectedPct: 90,
  publishFailures: 10,
  publishFailureCauses: { ECONNREFUSED: 10 },
  skewFloor: 1,
  foreignMessages: 0,
  elapsedMs: 1000,
  plannedMs: 1000,
  runner: { runnerPeakRssMb: 100, runnerLoopLagMs: { p50: 0, p99: 1, max: 2 }, runnerStalledWindowsPct: 0 },
  restart: { ok: true, error: null, mode: 'kill' },
  droppedConnections: 100,
  initiallyConnected: 100,
  neverReconnected: 0,
  recoveryTimedOut: false,
  recoveryTimeoutMs: 60_000,
  publishFailuresOutsideRestart: 0,
  publishFailuresDuringRestart: 10,
};
const codes = (r: Partial<RestartValidityInput>) => checkRestartValidity({ ...base, ...r }).flags.map((f) => f.code);

describe('avalanche validity rules', () => {
  it('a clean restart with publishes refused only while the server was down is valid, without PARTIAL_PUBLISH', () => {
    expect(checkRestartValidity(base)).toEqual({ valid: true, flags: [] });
  });
  it('RESTART_FAILED is fatal', () => {
    const v = checkRestartValidity({ ...base, restart: { ok: false, error: 'exit 3', mode: 'command' } });
    expect(v.valid).toBe(false);
    expect(v.flags.find((f) => f.code === 'RESTART_FAILED')?.message).toMatch(/command restart failed: exit 3/);
  });
  it('RESTART_NOT_OBSERVED warns when a successful restart dropped nobody', () => {
    expect(codes({ droppedConnections: 0 })).toEqual(['RESTART_NOT_OBSERVED']);
  });
  it('RECOVERY_TIMEOUT warns when the wait ended with clients still out', () => {
    expect(codes({ recoveryTimedOut: true, neverReconnected: 3 })).toEqual(['RECOVERY_TIMEOUT']);
    expect(codes({ recoveryTimedOut: false, neverReconnected: 3 })).toEqual([]);
  });
  it('PUBLISH_FAILED_OUTSIDE_RESTART warns and brings PARTIAL_PUBLISH back', () => {
    expect(codes({ publishFailuresOutsideRestart: 2 })).toEqual(['PARTIAL_PUBLISH', 'PUBLISH_FAILED_OUTSIDE_RESTART']);
  });
  it("RUNNER_FRONT_FD_LIMIT is fatal when the runner's own front ran out of file descriptors", () => {
    const v = checkRestartValidity({ ...base, frontFdErrors: 4 });
    expect(v.valid).toBe(false);
    expect(v.flags.map((f) => f.code)).toEqual(['RUNNER_FRONT_FD_LIMIT']);
    expect(codes({ frontFdErrors: 0 })).toEqual([]);
  });
  it('shared rules still apply', () => {
    expect(codes({ connectedClients: 0 })).toContain('NOTHING_CONNECTED');
  });
});
