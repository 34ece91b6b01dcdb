import { describe, expect, it } from 'vitest';
import { argvToValues, defaultsOf, parseOptions } from './options.ts';
import { ReboundError } from './errors.ts';

const TABLE = {
  clients: { type: 'int', default: 10, min: 1, max: 100, env: ['NUM_CLIENTS'], aliases: ['n'], doc: 'clients' },
  rate: { type: 'number', default: 1.5, min: 0, doc: 'rate' },
  mode: { type: 'enum', values: ['a', 'b'], default: 'a', doc: 'mode' },
  verbose: { type: 'bool', default: false, doc: 'verbose' },
  jitterMs: { type: 'int', default: 0, min: 0, doc: 'ms' },
} as const;

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return { code: (err as ReboundError).code, message: (err as Error).message };
  }
  return undefined;
};

describe('parseOptions', () => {
  it('defaults < env < explicit values, with kebab-case and aliases', () => {
    expect(parseOptions(TABLE, {})).toEqual(defaultsOf(TABLE));
    expect(parseOptions(TABLE, { env: { NUM_CLIENTS: '20' } }).clients).toBe(20);
    expect(parseOptions(TABLE, { env: { NUM_CLIENTS: '20' }, values: { n: '30' } }).clients).toBe(30);
    expect(parseOptions(TABLE, { values: { 'jitter-ms': '5' } }).jitterMs).toBe(5);
  });

  it('keeps 0 instead of falling back to the default', () => {
    expect(parseOptions(TABLE, { values: { rate: '0' } }).rate).toBe(0);
  });

  it.each([
    [{ clients: 'abc' }, 'RR_ERR_OPTION_INVALID', /"clients" must be a number/],
    [{ clients: '1.5' }, 'RR_ERR_OPTION_INVALID', /must be an integer/],
    [{ clients: '0' }, 'RR_ERR_OPTION_INVALID', /must be >= 1/],
    [{ clients: '101' }, 'RR_ERR_OPTION_INVALID', /must be <= 100/],
    [{ clients: '' }, 'RR_ERR_OPTION_INVALID', /must be a number/],
    [{ rate: 'Infinity' }, 'RR_ERR_OPTION_INVALID', /must be a number/],
    [{ mode: 'c' }, 'RR_ERR_OPTION_INVALID', /one of a, b/],
    [{ verbose: 'maybe' }, 'RR_ERR_OPTION_INVALID', /boolean/],
    [{ nope: '1' }, 'RR_ERR_OPTION_UNKNOWN', /unknown query option "nope"/],
  ])('rejects %j with %s', (values, code, msg) => {
    const e = codeOf(() => parseOptions(TABLE, { values, origin: 'query' }));
    expect(e?.code).toBe(code);
    expect(e?.message).toMatch(msg);
  });

  it('rejects a bad env value and names the variable', () => {
    expect(codeOf(() => parseOptions(TABLE, { env: { NUM_CLIENTS: 'lots' } }))?.message).toMatch(/NUM_CLIENTS/);
  });

  it('returns a frozen object', () => {
    expect(Object.isFrozen(parseOptions(TABLE, {}))).toBe(true);
  });
});

describe('argvToValues', () => {
  it('reads --name value, --name=value and bare boolean flags', () => {
    expect(argvToValues(['--clients', '5', '--rate=2', '--verbose', '--mode', 'b'], TABLE)).toEqual({ clients: '5', rate: '2', verbose: true, mode: 'b' });
  });
  it('rejects positional arguments and missing values', () => {
    expect(codeOf(() => argvToValues(['stray'], TABLE))?.code).toBe('RR_ERR_OPTION_INVALID');
    expect(codeOf(() => argvToValues(['--clients'], TABLE))?.message).toMatch(/needs a value/);
  });
});

describe('strict validator (one for CLI and HTTP)', () => {
  it('refuses one option given under two names, or one flag given twice', () => {
    const two = codeOf(() => parseOptions(TABLE, { values: { n: '5', clients: '6' }, origin: 'query' }));
    expect(two?.code).toBe('RR_ERR_OPTION_INVALID');
    expect(two?.message).toMatch(/"clients" repeats "n"/);
    const twice = codeOf(() => argvToValues(['--clients', '10', '--clients', '20'], TABLE));
    expect(twice?.message).toMatch(/--clients given twice \("10" and "20"\)/);
    expect(codeOf(() => argvToValues(['--verbose', '--verbose'], TABLE))?.code).toBe('RR_ERR_OPTION_INVALID');
  });

  it('takes plain decimals only: no hex, padding, exponent or empty value', () => {
    for (const v of ['0x10', ' 1', '1 ', '1e1', '+5', '', '0b1']) {
      const e = codeOf(() => parseOptions(TABLE, { values: { clients: v }, origin: 'query' }));
      expect(e?.code, JSON.stringify(v)).toBe('RR_ERR_OPTION_INVALID');
    }
    expect(codeOf(() => parseOptions(TABLE, { values: { n: '0x10' } }))?.message).toMatch(/plain decimal/);
    expect(parseOptions(TABLE, { values: { clients: '16', rate: '0.25' } })).toMatchObject({ clients: 16, rate: 0.25 });
    expect(parseOptions(TABLE, { values: { rate: '.5' } }).rate).toBe(0.5);
  });

  it('an unknown flag is "unknown option", at the end of the line or before another flag', () => {
    for (const argv of [['--dry-runn'], ['--jsn'], ['--clients', '3', '--verboes'], ['--typo', '--clients', '3']]) {
      const e = codeOf(() => argvToValues(argv, TABLE));
      expect(e?.code, argv.join(' ')).toBe('RR_ERR_OPTION_UNKNOWN');
      expect(e?.message).toMatch(/unknown option --/);
      expect(e?.message).not.toMatch(/needs a value/);
    }
  });

  it('Object.prototype names are unknown options like any other, as flags and as values', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      const flag = codeOf(() => parseOptions(TABLE, { values: argvToValues([`--${name}`, '1'], TABLE), origin: 'CLI' }));
      expect(flag?.code, `--${name}`).toBe('RR_ERR_OPTION_UNKNOWN');
      expect(flag?.message).toContain(`"${name}"`);
      // A query string or JSON body carries them as own keys (JSON.parse keeps "__proto__" as one).
      const values = JSON.parse(`{"${name}":"1"}`) as Record<string, unknown>;
      expect(codeOf(() => parseOptions(TABLE, { values, origin: 'query' }))?.code, name).toBe('RR_ERR_OPTION_UNKNOWN');
    }
  });

  it('refuses control characters in string values (they would forge log lines)', () => {
    const T = { stream: { type: 'string', default: '', doc: 's' }, label: { type: 'optional-string', default: undefined, doc: 'l' } } as const;
    for (const v of ['a\nb', 'a\rb', 'a\u001b[31mb', 'a\u0000', 'a\u0085b']) {
      const e = codeOf(() => parseOptions(T, { values: { stream: v }, origin: 'query' }));
      expect(e?.message, JSON.stringify(v)).toMatch(/"stream" must not contain control characters/);
    }
    expect(codeOf(() => parseOptions(T, { values: { label: 'x\ty' } }))?.code).toBe('RR_ERR_OPTION_INVALID');
    expect(parseOptions(T, { values: { stream: 'bench-1 ü' } }).stream).toBe('bench-1 ü');
  });
});
