import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, ReboundError, toErrorBody } from './errors.ts';

describe('error registry', () => {
  it('every code is documented in docs/errors.md with its status', () => {
    const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
    for (const [code, { status }] of Object.entries(ERROR_CODES)) {
      expect(doc, code).toMatch(new RegExp(`\\| \`${code}\` \\| ${status} \\|`));
    }
  });

  it('every code documented exists', () => {
    const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
    for (const m of doc.matchAll(/\| `(RR_ERR_[A-Z_]+)` \|/g)) expect(ERROR_CODES).toHaveProperty(m[1]!);
  });

  it('builds the one HTTP body shape and hides unexpected errors behind RR_ERR_INTERNAL', () => {
    expect(toErrorBody(new ReboundError('RR_ERR_BROADCAST_INVALID', 'bad', { details: { index: 2 } }))).toEqual({
      statusCode: 422,
      error: 'Unprocessable Entity',
      code: 'RR_ERR_BROADCAST_INVALID',
      message: 'bad',
      details: { index: 2 },
    });
    expect(toErrorBody(new TypeError('boom'))).toEqual({ statusCode: 500, error: 'Internal Server Error', code: 'RR_ERR_INTERNAL', message: 'boom' });
  });
});
