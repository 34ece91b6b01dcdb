import { redactUrlCredentials } from './redact.ts';

/**
 * Text that reaches a terminal (log lines, job log tails, the coordinator's output) must not be
 * able to drive it or lie about what it says: ESC[2J clears a screen, CR rewrites a line, OSC
 * sequences retitle windows or forge links, and a bidi override (U+202E) shows a line reversed, so
 * `txt.exe` can read as `exe.txt`. Every C0 and C1 control character and DEL, the Unicode line and
 * paragraph separators, and the bidi controls (U+061C, U+200E/F, U+202A-202E embeddings/overrides,
 * U+2066-2069 isolates) become visible escapes: newline/CR/tab as `\n` `\r` `\t`, other Latin-1
 * ones as `\xNN`, the rest as `\u{NNNN}`. Everything else is left as is.
 *
 * The one escape of the tree: the runner (its log and errors) and the coordinator (a shard's text)
 * both use it (through safeText), so what one makes visible the other does too.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function escapeControl(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return NAMED[c] ?? (code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`);
  });
}

/**
 * Text for a log line, a job's error or a terminal: URL credentials redacted (lib/redact.ts),
 * then escaped. What the runner logs and what the coordinator prints go through this one function.
 */
export function safeText(text: string): string {
  return escapeControl(redactUrlCredentials(text));
}
