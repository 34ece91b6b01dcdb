import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The command blocks of the docs (README.md, docs/**.md), for lib/docs.test.ts: every fenced block
 * that holds shell commands carries a marker on the line right before its fence, either
 * `<!-- doc-test: <id> -->` (lib/docs.test.ts runs the block's own text at small scale) or
 * `<!-- illustrative: <reason> -->` (not run, for the reason given; its `npm run` lines are still
 * checked against package.json and the CLI's option table).
 *
 * Which fences are command blocks: info string `sh`, `bash`, `shell`, `console` or `zsh`; or no
 * info string and a first non-blank line that is a command (optional `VAR=value` prefixes, then
 * one of COMMAND_WORDS). JSON, TypeScript, text and output fences need no marker.
 */

export interface DocBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  text: string;
  /** The marker on the line before the fence, if any. */
  marker?: { kind: 'doc-test' | 'illustrative'; value: string };
  command: boolean;
}

const SHELL_LANGS = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);
const COMMAND_WORDS = ['npm', 'npx', 'node', 'curl', 'docker', 'docker-compose', 'railway', 'kill', 'export', 'redis-server', 'git', 'cd', 'tsx', 'openssl'];
const COMMAND_LINE = new RegExp(`^\\s*(\\$ )?([A-Z_][A-Z0-9_]*=\\S*\\s+)*(${COMMAND_WORDS.join('|')})(\\s|$)`);
const MARKER = /^\s*<!--\s*(doc-test|illustrative):\s*(.*?)\s*-->\s*$/;

/** README.md and every docs/**.md of the checkout at `root`, sorted. */
export function docFiles(root: string): string[] {
  return ['README.md', ...readdirSync(join(root, 'docs'), { recursive: true }).map(String).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)].sort();
}

/** Every fenced block of the docs at `root`. */
export function readDocBlocks(root: string): DocBlock[] {
  return docFiles(root).flatMap((f) => parseDocBlocks(f, readFileSync(join(root, f), 'utf8')));
}

export function parseDocBlocks(file: string, md: string): DocBlock[] {
  const lines = md.split('\n');
  const out: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,})(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[2]!;
    const lang = open[3]!.trim().split(/\s+/)[0] ?? '';
    let j = i + 1;
    while (j < lines.length && !lines[j]!.trim().startsWith(fence)) j++;
    const body = lines.slice(i + 1, j);
    const text = body.map((l) => l.slice(Math.min(open[1]!.length, l.length - l.trimStart().length))).join('\n');
    const m = i > 0 ? MARKER.exec(lines[i - 1]!) : null;
    const firstLine = body.find((l) => l.trim() !== '') ?? '';
    const command = SHELL_LANGS.has(lang) || (lang === '' && COMMAND_LINE.test(firstLine));
    out.push({ file, line: i + 1, lang, text, command, ...(m ? { marker: { kind: m[1] as 'doc-test' | 'illustrative', value: m[2]! } } : {}) });
    i = j;
  }
  return out;
}

/** Shell lines of a block: `\` continuations joined, blank and whole-line comments dropped. */
export function logicalLines(text: string): string[] {
  const out: string[] = [];
  let cur = '';
  for (const raw of text.split('\n')) {
    if (raw.trimEnd().endsWith('\\')) {
      cur += raw.trimEnd().slice(0, -1) + ' ';
      continue;
    }
    const l = (cur + raw).trim();
    cur = '';
    if (l && !l.startsWith('#')) out.push(l);
  }
  return out;
}

export interface NpmRunCall {
  script: string;
  args: string[];
  /** `VAR=value` assignments before `npm run` on the same line. */
  env: Record<string, string>;
}

/** Every `[VAR=x ...] npm run [-s] <script> [-- args]` on a line, args up to a shell operator or comment. */
export function npmRunCalls(line: string): NpmRunCall[] {
  const out: NpmRunCall[] = [];
  // Split on shell separators outside quotes (good enough for the docs' lines: no nested quoting across them).
  for (const part of splitShell(line)) {
    const words = shellWords(part);
    const env: Record<string, string> = {};
    let k = 0;
    while (k < words.length && /^[A-Z_][A-Z0-9_]*=/.test(words[k]!)) {
      const w = words[k++]!;
      env[w.slice(0, w.indexOf('='))] = w.slice(w.indexOf('=') + 1);
    }
    if (words[k] !== 'npm' || words[k + 1] !== 'run') continue;
    k += 2;
    while (words[k]?.startsWith('-') && words[k] !== '--') k++;
    const script = words[k++];
    if (!script) continue;
    const args = words[k] === '--' ? words.slice(k + 1) : [];
    out.push({ script, args, env });
  }
  return out;
}

function splitShell(line: string): string[] {
  const parts: string[] = [];
  let cur = '';
  let q: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (q) {
      if (c === q) q = null;
      cur += c;
    } else if (c === "'" || c === '"') {
      q = c;
      cur += c;
    } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]!))) {
      break;
    } else if (c === '&' || c === '|' || c === ';' || c === '>' || c === '<' || c === '(' || c === ')') {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  return parts.map((p) => p.trim()).filter(Boolean);
}

function shellWords(s: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(s); m; m = re.exec(s)) out.push(m[1] ?? m[2] ?? m[3]!);
  return out;
}
