import { describe, expect, it } from 'vitest';
import { escapeControl } from './escape.ts';

describe('escapeControl', () => {
  it('makes terminal control sequences visible and leaves other text alone', () => {
    expect(escapeControl('a\x1b[2Jb')).toBe('a\\x1b[2Jb');
    expect(escapeControl('l1\nl2\r\t\x00\x7f\x9b')).toBe('l1\\nl2\\r\\t\\x00\\x7f\\x9b');
    expect(escapeControl('x\u2028y')).toBe('x\\u2028y');
    expect(escapeControl('plain ünïcode ✓ {"a":1}')).toBe('plain ünïcode ✓ {"a":1}');
  });
});
