import { describe, expect, it } from 'vitest';
import { eventually, open, startTcpServer, startToxiproxyTarget, uniqueName } from '../testing.ts';
import { createChaosProxy } from '../toxiproxy/client.ts';
import { CATALOG, CUTOFF } from './catalog.ts';

/**
 * The cutoff plan's toxics on a real proxy, Rebound's or, with TOXIPROXY_URL, a real Toxiproxy:
 * the undo order only matters to the latter (see `toxics` in catalog.ts), so run it there too.
 */
describe('cutoff plan toxics', () => {
  // Against TOXIPROXY_URL too (startToxiproxyTarget): the undo order matters only to the real one.
  it('cuts a live connection and a new one after 1 KB downstream, the close arriving 1 s late; undo releases a held close at once and lets data through', async () => {
    const upstream = await startTcpServer();
    const tp = await startToxiproxyTarget();
    const p = await createChaosProxy(tp.url, { name: uniqueName('cutoff'), upstream: upstream.upstream });
    const accepted = async () => {
      const n = upstream.sockets.length;
      const r = await open(p.listen);
      await eventually(() => upstream.sockets.length > n, 5000, 'upstream accept');
      return { reader: r, server: upstream.sockets.at(-1)! };
    };
    try {
      const live = await accepted();
      let undo = await CATALOG.cutoff.apply!(p);
      for (const { reader, server } of [live, await accepted()]) {
        server.write(Buffer.alloc(3 * CUTOFF.bytes, 7));
        await reader.until(() => reader.length >= CUTOFF.bytes, 5000, 'the first KB');
        const lastByteAt = reader.arrivals.at(-1)!.at;
        await reader.closed(5000);
        expect(reader.length).toBe(CUTOFF.bytes);
        expect(performance.now() - lastByteAt).toBeGreaterThanOrEqual(CUTOFF.closeDelayMs - 50);
      }
      // Lifted while slow_close holds a close back: the plan is over, so the close comes now.
      const held = await accepted();
      held.server.write(Buffer.alloc(3 * CUTOFF.bytes, 7));
      await held.reader.until(() => held.reader.length >= CUTOFF.bytes, 5000, 'the first KB');
      const liftedAt = performance.now();
      await undo();
      await held.reader.closed(5000);
      expect(performance.now() - liftedAt).toBeLessThan(CUTOFF.closeDelayMs / 2);
      undo = async () => {};
      const after = await accepted();
      after.server.write(Buffer.alloc(3 * CUTOFF.bytes, 7));
      await after.reader.bytes(3 * CUTOFF.bytes);
      expect(after.reader.ended).toBe(false);
      after.reader.socket.destroy();
    } finally {
      await p.remove();
      await tp.close();
      await upstream.close();
    }
  });

});
