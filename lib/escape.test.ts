import { describe, expect, it } from 'vitest';
import { escapeControl } from './escape.ts';

describe('escapeControl', () => {
  it('makes terminal control sequences visible and leaves other text alone', () => {
    expect(escapeControl('a\x1b[2Jb')).toBe('a\\x1b[2Jb');
    expect(escapeControl('l1\nl2\r\t\x00\x7f\x9b')).toBe('l1\\nl2\\r\\t\\x00\\x7f\\x9b');
    expect(escapeControl('x\u2028y\u2029')).toBe('x\\u{2028}y\\u{2029}');
    expect(escapeControl('plain ünïcode ✓ {"a":1} \u00a0\u00ff')).toBe('plain ünïcode ✓ {"a":1} \u00a0\u00ff');
  });

  it('makes every bidi control visible, so a line cannot be shown reversed or reordered', () => {
    expect(escapeControl('report\u202etxt.exe')).toBe('report\\u{202e}txt.exe');
    const bidi = ['\u061c', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069'];
    for (const c of bidi) expect(escapeControl(`a${c}b`), c.charCodeAt(0).toString(16)).toBe(`a\\u{${c.charCodeAt(0).toString(16)}}b`);
    // The neighbours of those ranges are ordinary text.
    expect(escapeControl('\u200d\u2027\u202f\u2065\u206a')).toBe('\u200d\u2027\u202f\u2065\u206a');
  });
});
