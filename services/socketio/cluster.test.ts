/**
 * `--workers 2` of the Socket.IO server (default mode, @socket.io/cluster-adapter): the cluster
 * contract shared with ws, and the combinations it refuses at startup.
 */
import { describe, expect, it } from 'vitest';
import { describeClusterContract } from '../common/cluster-contract.ts';
import { startService } from '../common/spawn.ts';

describeClusterContract('socketio', ['--mode', 'default']);

describe('socketio --workers refusals', () => {
  it.each([
    ['--mode csr (the cluster adapter cannot recover sessions)', ['--mode', 'csr', '--workers', '2']],
    ['--adapter redis', ['--adapter', 'redis', '--workers', '2']],
  ])('refuses --workers with %s: exit 2 before listening', async (_what, args) => {
    // The service's own coded reason comes quoted in the start error.
    await expect(startService('socketio', { args })).rejects.toThrow(/exited before listening \(code 2, signal null\): socketio: RR_ERR_OPTION_INVALID: /);
  });
});
