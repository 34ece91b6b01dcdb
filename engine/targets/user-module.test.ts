import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReboundError } from '../../lib/errors.ts';
import { withTarget } from '../measure/local-target.ts';
import { parseJitterOptions } from '../../runners/jitter/options.ts';
import { runJitter } from '../../runners/jitter/run.ts';
import { getTarget, withTargets } from './index.ts';
import { RunSession } from '../session/session.ts';
import { connectPhase } from '../session/phases/connect.ts';
import { deliveryFields } from '../session/results.ts';
import { checkTargetShape, guardTarget, loadTargetModule } from './user-module.ts';
import { LeanClient, type TargetClient, type TargetDefinition } from './contract.ts';

/** The smallest declaration the contract takes; each case below breaks one thing of it. */
const good = () => ({
  name: 'mine',
  description: 'a test target',
  offlineFloorMs: 0,
  capabilities: { reconnect: 'manual', resume: 'none', offsets: false, epochs: false, whispers: false, library: 'ws' },
  createClient: () => ({}),
  leanUnsupported: 'test',
});

const shapeError = (x: unknown): { code: string; message: string; details: unknown } => {
  try {
    checkTargetShape(x, './mine.ts');
  } catch (err) {
    expect(err).toBeInstanceOf(ReboundError);
    const e = err as ReboundError;
    return { code: e.code, message: e.message, details: e.details };
  }
  throw new Error('no error');
};

describe('a target file: its shape, checked at load', () => {
  it('takes the contract and derives reconnect/replays (defineTarget)', () => {
    expect(checkTargetShape(good(), './mine.ts')).toMatchObject({ name: 'mine', reconnect: 'manual', replays: false });
  });

  it.each([
    ['not an object', 42, 'the default export'],
    ['a typo of a hook', { ...good(), createclient: () => ({}) }, 'field "createclient"'],
    ['no createClient', { ...good(), createClient: undefined }, 'createClient'],
    ['a capability outside the contract', { ...good(), capabilities: { ...good().capabilities, resume: 'everything' } }, 'capabilities.resume'],
    ['a non-boolean capability', { ...good(), capabilities: { ...good().capabilities, offsets: 'yes' } }, 'capabilities.offsets'],
    ['a lean client and a reason for none', { ...good(), createLeanClient: () => ({}) }, 'createLeanClient'],
    ['neither lean client nor reason', { ...good(), leanUnsupported: undefined }, 'leanUnsupported'],
    ['a publish with both forms', { ...good(), publish: { request: () => ({}), send: async () => {} } }, 'publish'],
    ['a bad accept status', { ...good(), publish: { request: () => ({}), acceptStatus: [42] } }, 'publish.acceptStatus'],
    ['a built-in name', { ...good(), name: 'ws' }, 'name'],
    ['a name with a newline', { ...good(), name: 'a\nb' }, 'name'],
    ['replays that contradict resume', { ...good(), replays: true }, 'replays'],
  ])('%s: RR_ERR_TARGET_MODULE_INVALID naming the file and the field', (_why, x, hook) => {
    const e = shapeError(x);
    expect(e.code).toBe('RR_ERR_TARGET_MODULE_INVALID');
    expect(e.message).toContain('target module ./mine.ts: ');
    expect(e.details).toEqual({ file: './mine.ts', hook });
  });

  it('a file that is missing, throws while loading or has no default export is refused, naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rebound-target-load-'));
    writeFileSync(join(dir, 'throws.ts'), "throw new Error('top-level boom');\nexport default {};\n");
    writeFileSync(join(dir, 'nodefault.ts'), 'export const x = 1;\n');
    await expect(loadTargetModule('nope.ts', dir)).rejects.toMatchObject({ code: 'RR_ERR_TARGET_MODULE_LOAD', message: 'target module nope.ts: no such file' });
    await expect(loadTargetModule('throws.ts', dir)).rejects.toMatchObject({ code: 'RR_ERR_TARGET_MODULE_LOAD', message: expect.stringContaining('top-level boom') });
    await expect(loadTargetModule('nodefault.ts', dir)).rejects.toMatchObject({ code: 'RR_ERR_TARGET_MODULE_INVALID', details: { file: 'nodefault.ts', hook: 'the default export' } });
  });
});

/**
 * The ws target's real client behind a faulty target file: client 0's connect() never settles,
 * client 1's createClient() throws, every client's drop() throws after dropping, and every
 * client also emits a garbage arrival per real one. The run must end, flagged, naming the file.
 */
function faultyWs(): TargetDefinition {
  const ws = getTarget('ws');
  const { createLeanClient: _l, publish: _p, ...rest } = ws;
  return {
    ...rest,
    name: 'faulty-ws',
    leanUnsupported: 'test',
    createClient: (o) => {
      if (o.index === 1) throw new Error('cannot build client 1');
      const c = ws.createClient(o);
      const faulty: TargetClient = {
        index: c.index,
        connect: () => (o.index === 0 ? new Promise<void>(() => {}) : c.connect()),
        reconnect: () => c.reconnect(),
        close: () => c.close(),
        drop: () => {
          c.drop();
          throw new Error('drop hook bug');
        },
        on: (ev, fn) => {
          if (ev !== 'message') return c.on(ev, fn);
          return c.on('message', (m) => {
            (fn as (x: unknown) => void)({ data: 42, at: m.at });
            (fn as (x: unknown) => void)(m);
          });
        },
      };
      return faulty;
    },
  } as TargetDefinition;
}

describe('a target file: its faults at run time', () => {
  it('a hook that throws, a connect() that never settles and garbage arrivals end the run with TARGET_MODULE_FAULT naming the file; the runner goes on', async () => {
    const def = guardTarget(faultyWs(), './faulty.ts', 1500);
    const o = parseJitterOptions({ values: { target: 'ws', clients: '6', msgs: '40', interval: '150', jitter: '1', jitterMs: '300', settle: '2000', seed: '3' }, origin: 'test' });
    const r = await withTargets([def], () => withTarget(getTarget('ws'), undefined, (url) => runJitter({ ...o, target: def.name }, url).result));
    const flag = r.validity.flags.find((f) => f.code === 'TARGET_MODULE_FAULT');
    expect(r.validity.valid).toBe(false);
    expect(flag?.severity).toBe('fatal');
    expect(flag?.message).toContain('the target module ./faulty.ts broke the target contract');
    expect(r.targetModule?.faults.map((f) => f.hook).sort()).toEqual(['connect()', 'createClient()', 'drop()', 'message event']);
    expect(r.targetModule?.faults.find((f) => f.hook === 'message event')?.sample).toContain('data must be the published string');
    // The garbage never reached the books: the real arrivals did.
    expect(r.foreignMessages).toBe(0);
    expect(r.connectedClients).toBe(4);
    expect(r.receivedDeliveries).toBeGreaterThan(0);
  });
});

describe('a lean protocol that throws', () => {
  it('fails its connection with the hook named; the process goes on', async () => {
    await withTarget(getTarget('ws'), undefined, async (url) => {
      const c = new LeanClient({ index: 0, url, stream: 's' }, { url: (b) => `${b.replace(/^http/, 'ws')}/ws`, onMessage: () => { throw new Error('bad frame parser'); } });
      await expect(c.connect()).rejects.toThrow('lean protocol onMessage() threw: bad frame parser');
      c.close();
    });
  });

  it("a target file's lean protocol that throws is booked as the file's fault, the input of TARGET_MODULE_FAULT", async () => {
    const ws = getTarget('ws');
    const def = guardTarget({ ...ws, name: 'lean-broken', service: undefined, createLeanClient: (o) => new LeanClient(o, { url: (b) => `${b.replace(/^http/, 'ws')}/ws`, onOpen: () => { throw new Error('bad opener'); }, onMessage: () => undefined }) } as TargetDefinition, './lean-broken.ts');
    await withTarget(ws, undefined, async (url) => {
      const s = new RunSession({ target: def, urlOf: () => url, clients: 3, messages: 1, runId: 'r', stream: 's', seed: 1, createClient: (o) => def.createLeanClient!(o) });
      await s.run(connectPhase({ perSec: 100, timeoutMs: 5000 }));
      s.close();
      const fields = deliveryFields(s, 0);
      expect(fields.connectFailures).toBe(3);
      expect(fields.targetModule).toEqual({ file: './lean-broken.ts', faults: [{ hook: 'lean onOpen()', count: 3, sample: 'lean protocol onOpen() threw: bad opener' }] });
    });
  });
});
