/**
 * Text that reaches a terminal (log lines, job log tails, the coordinator's output) must not be
 * able to drive it: ESC[2J clears a screen, CR rewrites a line, OSC sequences retitle windows or
 * forge links. Every C0 and C1 control character, DEL and the Unicode line/paragraph separators
 * become visible escapes (`\n`, `\t`, `\x1b`, `\u2028`); everything else is left as is.
 */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => NAMED[c] ?? (c.charCodeAt(0) > 0xff ? `\\u${c.charCodeAt(0).toString(16)}` : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`));
}
