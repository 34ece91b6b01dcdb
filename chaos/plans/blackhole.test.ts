import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { eventually, open, startTcpServer, startToxiproxyTarget, uniqueName, type Reader } from '../testing.ts';
import { createChaosProxy, type ChaosProxyHandle } from '../toxiproxy/client.ts';
import { BLACKHOLE, CATALOG } from './catalog.ts';

/**
 * The blackhole plan's toxics on a real proxy, Rebound's or, with TOXIPROXY_URL, a real
 * Toxiproxy (the lift is built from calls whose effects both must share).
 */
describe('blackhole plan toxics', () => {
  /** Nothing reaches the other end in either direction within `ms` (a negative check needs a wait). */
  const heldBothWays = async (c: { reader: Reader; server: Socket; received: () => number }, ms = 300) => {
    const before = { up: c.received(), down: c.reader.length };
    c.reader.socket.write('ping');
    c.server.write('pong');
    await new Promise((r) => setTimeout(r, ms));
    expect(c.received() - before.up, 'client bytes reaching the server').toBe(0);
    expect(c.reader.length - before.down, 'server bytes reaching the client').toBe(0);
    expect(c.reader.ended, 'held, not closed').toBe(false);
  };
  /** Bytes go through both ways. */
  const flows = async (c: { reader: Reader; server: Socket; received: () => number }) => {
    const up = c.received();
    const down = c.reader.length;
    c.reader.socket.write('ping');
    c.server.write('pong');
    await eventually(() => c.received() >= up + 4, 5000, 'client bytes at the server');
    await c.reader.bytes(down + 4, 5000);
  };

  it('holds every byte both ways, also on a second blackhole; the lift closes every held connection in one step, so a client reconnecting at once is never caught by the rest of the lift', async () => {
    const upstream = await startTcpServer();
    const tp = await startToxiproxyTarget();
    const p = await createChaosProxy(tp.url, { name: uniqueName('blackhole'), upstream: upstream.upstream });
    type Conn = Awaited<ReturnType<typeof accepted>>;
    const accepted = async () => {
      const n = upstream.sockets.length;
      const reader = await open(p.listen);
      await eventually(() => upstream.sockets.length > n, 5000, 'upstream accept');
      const i = upstream.sockets.length - 1;
      return { reader, server: upstream.sockets[i]!, received: () => upstream.received[i]!.reduce((a, b) => a + b.length, 0) };
    };
    // The plan's calls one at a time: while lifting, after each call, once the held connections
    // have been closed, a connection opened right then (a client reconnecting at once) must pass
    // bytes both ways and survive every call still to come.
    let held: Conn[] = [];
    let lifting = false;
    const probes: Conn[] = [];
    const calls: string[] = [];
    const afterCall = async (what: string) => {
      calls.push(what);
      if (!lifting) return;
      // The close reaches the clients shortly after the API answers; a call that closes nothing times out here.
      await eventually(() => held.every((c) => c.reader.ended), 500, 'held connections closed').catch(() => {});
      if (!held.every((c) => c.reader.ended)) return;
      const probe = await accepted();
      await flows(probe).catch((err: Error) => {
        throw new Error(`a connection opened after "${what}" (the held ones closed) is caught: ${err.message}; lift calls so far: ${calls.join('; ')}`);
      });
      probes.push(probe);
    };
    const stepped: ChaosProxyHandle = Object.create(p);
    stepped.addToxic = async (spec) => { const r = await p.addToxic(spec); await afterCall(`add ${spec.name}`); return r; };
    stepped.updateToxic = async (n, c) => { const r = await p.updateToxic(n, c); await afterCall(`update ${n} ${JSON.stringify(c)}`); return r; };
    stepped.removeToxic = async (n) => { await p.removeToxic(n); await afterCall(`remove ${n}`); };
    stepped.setEnabled = async (e) => { await p.setEnabled(e); await afterCall(`enabled ${e}`); };
    try {
      for (const round of [1, 2]) {
        const live = await accepted();
        await flows(live);
        calls.length = 0;
        const lift = await CATALOG.blackhole.apply!(stepped);
        const during = await accepted();
        for (const c of [live, during]) await heldBothWays(c);

        held = [live, during];
        probes.length = 0;
        calls.length = 0;
        lifting = true;
        await lift();
        lifting = false;
        const why = `round ${round}, lift calls: ${calls.join('; ')}`;
        for (const c of held) await c.reader.closed(2000);
        expect(probes.length, `a connection opened after the close (${why})`).toBeGreaterThanOrEqual(1);
        for (const probe of probes) {
          expect(probe.reader.ended, `opened after the close, then closed by the rest of the lift (${why})`).toBe(false);
          await flows(probe);
          probe.reader.socket.destroy();
        }
        const after = await accepted();
        await flows(after);
        after.reader.socket.destroy();
      }
      // Between blackholes the proxy keeps only the parked upstream toxic, at toxicity 0 (a pass-through).
      const left = ((await (await fetch(`${tp.url}/proxies/${p.name}/toxics`)).json()) as Array<{ name: string; toxicity: number }>).map((t) => ({ name: t.name, toxicity: t.toxicity }));
      expect(left).toEqual([{ name: BLACKHOLE.up, toxicity: 0 }]);
    } finally {
      await p.remove();
      await tp.close();
      await upstream.close();
    }
  });

});
