/**
 * Shard text is data: a log line, an error or a snippet from a shard reaches our terminal only
 * with its control characters escaped, so a shard can neither clear the screen (ESC[2J), move
 * the cursor, nor forge a line of its own (`\n[s2] done: all good`). C0/C1 controls and DEL become
 * `\xNN`, newline/CR/tab their usual escapes; Unicode line separators and bidi overrides `\u{...}`.
 */
export function safeText(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => {
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}
