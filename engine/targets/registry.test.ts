/**
 * The target registry says what each client can do; this holds every claim against the real
 * servers. Each local target is started on port 0 and each of its two clients (the full library
 * client and the lean one) is connected, dropped and brought back: a client that says `library`
 * comes back by itself and one that says `manual` does not; `history`/`session` restore what was
 * published while it was away and `none` does not; offsets, epochs and whispers show up exactly
 * where they are declared.
 */
import { describe, expect, it } from 'vitest';
import { waitUntil } from '../../lib/time.ts';
import { uwsAvailability } from '../../services/uws/load.ts';
import { withTarget } from '../measure/local-target.ts';
import { clientsOf, findTarget, getTarget, LEAN_TARGETS, leanClientFor, pickClient, TARGET_NAMES, WHISPER_TARGETS, whisperClientFor, withTargets, type ClientChoice } from './index.ts';
import { noLeanTarget, withNoLeanTarget } from './testing.ts';
import { LeanClient } from './lean-client.ts';
import { LEAN_CAPABILITIES, type ArrivedMessage, type TargetClient } from './types.ts';

describe('extra targets for tests', () => {
  it('resolve by name only inside withTargets, and the shipped registry and name lists never change', async () => {
    const names = [...TARGET_NAMES];
    const lean = [...LEAN_TARGETS];
    await withNoLeanTarget(async (name) => {
      await Promise.resolve(); // still visible after an await: the scope follows the async context
      expect(getTarget(name).leanUnsupported).toBe('test target: no lean client');
      expect(leanClientFor(name)).toBeUndefined();
      expect(whisperClientFor(name)).toBeDefined();
    });
    expect(findTarget('ws-no-lean')).toBeUndefined();
    expect(() => getTarget('ws-no-lean')).toThrow(expect.objectContaining({ code: 'RR_ERR_TARGET_UNKNOWN' }));
    expect(TARGET_NAMES).toEqual(names);
    expect(LEAN_TARGETS).toEqual(lean);
    expect(() => withTargets([{ ...noLeanTarget(), name: 'ws' }], () => 0)).toThrow(/already registered/);
  });
});

describe('every target declares its clients', () => {
  it('a full constructor, a lean one or the reason it has none, and capabilities that agree with reconnect/replays', () => {
    for (const name of TARGET_NAMES) {
      const t = getTarget(name);
      expect(typeof t.createClient, name).toBe('function');
      // Exactly one of the two: the type says so, and so must the value (a spread could carry both).
      expect(typeof t.createLeanClient === 'function', name).toBe(t.leanUnsupported === undefined);
      expect(t.reconnect, name).toBe(t.capabilities.reconnect);
      expect(t.replays, name).toBe(t.capabilities.resume !== 'none');
      // Offsets and epochs are the history protocol's; whoever resumes by history has both.
      expect(t.capabilities.offsets, name).toBe(t.capabilities.resume === 'history');
      expect(t.capabilities.epochs, name).toBe(t.capabilities.resume === 'history');
    }
    // Today every target has a lean client; the Redis variants share their in-memory twin's wire and clients.
    expect(LEAN_TARGETS).toEqual(TARGET_NAMES);
    for (const [redis, twin] of [['replay-redis', 'replay'], ['socketio-redis', 'socketio'], ['socketio-csr-redis', 'socketio-csr']] as const) {
      expect(getTarget(redis).capabilities).toEqual(getTarget(twin).capabilities);
      expect(getTarget(redis).createLeanClient).toBe(getTarget(twin).createLeanClient);
      expect(getTarget(redis).createClient).toBe(getTarget(twin).createClient);
    }
    expect(getTarget('anycable').capabilities).toEqual(getTarget('replay').capabilities);
  });

  it('picks by capability: lean when preferred and present, full when a capability needs it, none when nothing fits', () => {
    const replay = getTarget('replay');
    expect(pickClient(replay)!.kind).toBe('full');
    expect(pickClient(replay, { prefer: 'lean' })!.kind).toBe('lean');
    expect(pickClient(replay, { prefer: 'lean', needs: { resume: 'history' } })!.kind).toBe('full');
    expect(pickClient(getTarget('ws'), { needs: { resume: 'history' } })).toBeUndefined();
    // A target that declares lean unsupported falls back to its full client when lean is preferred.
    const noLean = { ...getTarget('ws'), createLeanClient: undefined, leanUnsupported: 'test: no lean wire' } as const;
    expect(clientsOf(noLean).map((c) => c.kind)).toEqual(['full']);
    expect(pickClient(noLean, { prefer: 'lean' })!.kind).toBe('full');
    expect(leanClientFor('nope')).toBeUndefined();
    expect(findTarget('nope')).toBeUndefined();
    expect(WHISPER_TARGETS).toEqual(TARGET_NAMES.filter((n) => getTarget(n).capabilities.whispers));
    expect(whisperClientFor('ws')).toBeTypeOf('function');
  });
});

const broadcast = async (url: string, stream: string, seq: number) => {
  const res = await fetch(`${url}/_broadcast`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ stream, data: JSON.stringify({ seq, sentAt: Date.now() }) }) });
  expect(res.status).toBe(201);
};

/** What one client saw, in order. */
function watch(c: TargetClient) {
  const seen = { msgs: [] as ArrivedMessage[], seqs: [] as number[], connected: [] as { resumed: boolean; attempt: number }[], disconnected: [] as string[] };
  c.on('message', (m) => {
    seen.msgs.push(m);
    const v = JSON.parse(m.data) as { seq?: number };
    if (typeof v.seq === 'number') seen.seqs.push(v.seq);
  });
  c.on('connected', (i) => seen.connected.push(i));
  c.on('disconnected', (d) => seen.disconnected.push(d.reason));
  c.on('error', () => {});
  return seen;
}

/**
 * Library reconnects wait ~0.99 x 600 ms before their first attempt (a fixed draw of the tuned
 * backoff), so what is published right after the drop is published while the client is away.
 */
const RECONNECT = { reconnectStrategy: 'tuned', reconnectBaseMs: 600, reconnectRng: () => 0.99 } as const;

async function checkClaims(url: string, target: string, choice: ClientChoice): Promise<void> {
  const caps = choice.capabilities;
  const stream = `caps-${target}-${choice.kind}`;
  const [a, b] = [0, 1].map((i) => choice.create({ index: i, url, stream, localAddress: `127.0.0.${i + 1}`, ...RECONNECT })) as [TargetClient, TargetClient];
  const sa = watch(a);
  const sb = watch(b);
  try {
    expect(choice.kind === 'lean' ? a instanceof LeanClient : !(a instanceof LeanClient)).toBe(true);
    await Promise.all([a.connect(), b.connect()]);
    await broadcast(url, stream, 1);
    await waitUntil(() => sa.seqs.includes(1) && sb.seqs.includes(1), 5000, `${target}/${choice.kind}: first broadcast`);
    const first = sa.msgs[0]!;
    expect(first.offset !== undefined, 'offsets').toBe(caps.offsets);
    expect(first.epoch !== undefined, 'epochs').toBe(caps.epochs);

    // Whispers: declared means relayed to the others (never the sender); undeclared means no method.
    if (caps.whispers) {
      a.whisper!({ whisperFrom: 'a' });
      await waitUntil(() => sb.msgs.some((m) => m.data.includes('whisperFrom')), 5000, `${target}/${choice.kind}: whisper relayed`);
      await new Promise((r) => setTimeout(r, 100));
      expect(sa.msgs.some((m) => m.data.includes('whisperFrom')), 'the sender does not hear its own whisper').toBe(false);
    } else expect(a.whisper).toBeUndefined();

    // Drop a; publish 2 while it is away.
    expect(a.drop()).toBe(true);
    await waitUntil(() => sa.disconnected.length > 0, 3000, 'disconnected');
    expect(sa.disconnected[0]).toBe('dropped');
    await broadcast(url, stream, 2);
    await waitUntil(() => sb.seqs.includes(2), 5000, 'b hears 2');
    if (caps.reconnect === 'library') {
      await waitUntil(() => sa.connected.length === 2, 8000, `${target}/${choice.kind}: library reconnect`);
    } else {
      // A manual client stays away until told; then reconnect() brings it back.
      await new Promise((r) => setTimeout(r, 900));
      expect(sa.connected.length, 'manual: no reconnect by itself').toBe(1);
      await a.reconnect();
    }
    expect(sa.connected[1]!.attempt).toBe(1);
    expect(sa.connected[1]!.resumed, 'resumed').toBe(caps.resume !== 'none');
    // 3 is live after the comeback: the pipe works, so a missing 2 is the protocol's answer, not a dead client.
    await broadcast(url, stream, 3);
    await waitUntil(() => sa.seqs.includes(3), 5000, `${target}/${choice.kind}: live after the comeback`);
    if (caps.resume === 'none') expect(sa.seqs).toEqual([1, 3]);
    else expect([...sa.seqs].sort()).toEqual([1, 2, 3]);
  } finally {
    a.close();
    b.close();
  }
}

describe('declared capabilities match what the clients do against the real servers', () => {
  const local = ['ws', ...(uwsAvailability().available ? ['uws'] : []), 'socketio', 'socketio-csr', 'replay'];
  for (const name of local) {
    it(`${name}: full and lean clients`, async () => {
      const t = getTarget(name);
      const choices = clientsOf(t);
      expect(choices.map((c) => c.kind)).toEqual(['full', 'lean']);
      expect(choices[1]!.capabilities).toEqual(LEAN_CAPABILITIES);
      await withTarget(t, undefined, async (url) => {
        for (const c of choices) await checkClaims(url, name, c);
      });
    }, 60_000);
  }
});
