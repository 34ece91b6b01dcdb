/**
 * The one Markdown table of the text outputs (first row the header). `pad`: columns padded to
 * their widest cell, so it reads as a table in a terminal too (the delivery runners' comparisons);
 * otherwise cells are escaped (`|`, newlines: capacity's cells are free text) and left unpadded.
 */
export function markdownTable(rows: string[][], o: { pad?: boolean } = {}): string {
  const [head, ...body] = rows;
  if (!head) return '';
  if (o.pad) {
    const widths = head.map((_, c) => Math.max(3, ...rows.map((r) => (r[c] ?? '').length)));
    const line = (r: string[]) => '| ' + r.map((cell, c) => cell.padEnd(widths[c]!)).join(' | ') + ' |';
    return [line(head), '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|', ...body.map(line)].join('\n');
  }
  const esc = (c: string) => c.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  return [`| ${head.map(esc).join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...body.map((r) => `| ${r.map(esc).join(' | ')} |`)].join('\n');
}
