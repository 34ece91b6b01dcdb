/**
 * The first JSON value of a request body, read the way Toxiproxy reads it: Go's
 * `json.NewDecoder(body).Decode(&v)`. That decoder stops at the end of the first value, so
 * anything after it (`{"name":"a",...}garbage`) is ignored, and its syntax errors have Go's
 * wording (`invalid character 'x' looking for beginning of value`, `unexpected EOF`), which is
 * what clients and people comparing the two servers see after `bad request body: `.
 */

/** Go's `encoding/json` nesting limit (`maxNestingDepth`). */
const MAX_DEPTH = 10_000;

class GoJsonSyntaxError extends Error {}

/** Parse the first JSON value of `text`; throws GoJsonSyntaxError with Go's message (`EOF` for an empty body). */
export function decodeFirstValue(text: string): unknown {
  const p = new Parser(text);
  p.skipSpace();
  if (p.i >= text.length) throw new GoJsonSyntaxError('EOF');
  return p.value();
}

/** Go's `quoteChar`: how a byte is shown inside `invalid character '…'`. */
function quoteChar(c: string): string {
  if (c === "'") return `'\\''`;
  if (c === '"') return `'"'`;
  const q = JSON.stringify(c).slice(1, -1);
  // JSON.stringify writes \u00XX for control bytes; strconv.Quote writes \xXX.
  return `'${q.replace(/^\\u00([0-9a-f]{2})$/, '\\x$1')}'`;
}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

class Parser {
  i = 0;
  constructor(private readonly s: string) {}

  skipSpace(): void {
    while (isSpace(this.s[this.i])) this.i++;
  }

  /** The next character (or the one `ahead` places further), or an `unexpected EOF` when the body ends mid-value. */
  private peek(ahead = 0): string {
    const c = this.s[this.i + ahead];
    if (c === undefined) throw new GoJsonSyntaxError('unexpected EOF');
    return c;
  }

  private fail(c: string, context: string): never {
    throw new GoJsonSyntaxError(`invalid character ${quoteChar(c)} ${context}`);
  }

  /** Iterative (an explicit stack), so 10 000 levels of nesting cannot overflow the JS stack. */
  value(): unknown {
    const stack: Array<{ obj: Record<string, unknown>; key: string } | { arr: unknown[] }> = [];
    for (;;) {
      this.skipSpace();
      const c = this.peek();
      let v: unknown;
      if (c === '{' || c === '[') {
        if (stack.length + 1 > MAX_DEPTH) this.fail(c, 'exceeded max depth');
        this.i++;
        this.skipSpace();
        if (this.peek() !== (c === '{' ? '}' : ']')) {
          stack.push(c === '{' ? { obj: {}, key: this.key() } : { arr: [] });
          continue;
        }
        v = c === '{' ? {} : [];
        this.i++;
      } else if (c === '"') v = this.string();
      else if (c === '-' || isDigit(c)) v = this.number();
      else if (c === 't') v = this.literal('true', true);
      else if (c === 'f') v = this.literal('false', false);
      else if (c === 'n') v = this.literal('null', null);
      else this.fail(c, 'looking for beginning of value');
      // Close every container this value completes; stop at one that wants another element.
      for (;;) {
        const top = stack[stack.length - 1];
        if (top === undefined) return v;
        this.skipSpace();
        const next = this.peek();
        this.i++;
        if ('obj' in top) {
          // defineProperty: a "__proto__" key is data, as in Go, not a prototype change.
          Object.defineProperty(top.obj, top.key, { value: v, enumerable: true, writable: true, configurable: true });
          if (next === ',') {
            top.key = this.key();
            break;
          }
          if (next !== '}') this.fail(next, 'after object key:value pair');
          v = top.obj;
        } else {
          top.arr.push(v);
          if (next === ',') break;
          if (next !== ']') this.fail(next, 'after array element');
          v = top.arr;
        }
        stack.pop();
      }
    }
  }

  /** An object key and its colon. */
  private key(): string {
    this.skipSpace();
    const k = this.peek();
    if (k !== '"') this.fail(k, 'looking for beginning of object key string');
    const key = this.string();
    this.skipSpace();
    const colon = this.peek();
    if (colon !== ':') this.fail(colon, 'after object key');
    this.i++;
    return key;
  }

  private string(): string {
    const start = this.i;
    this.i++;
    for (;;) {
      const c = this.peek();
      if (c === '"') break;
      if (c === '\\') {
        this.i++;
        const e = this.peek();
        if (e === 'u') {
          this.ahead(4, (h) => /[0-9a-fA-F]/.test(h), () => 'in \\u hexadecimal character escape');
          this.i += 4;
        } else if (!'"\\/bfnrt'.includes(e)) {
          this.fail(e, 'in string escape code');
        }
      } else if (c < ' ') {
        this.fail(c, 'in string literal');
      }
      this.i++;
    }
    this.i++;
    return JSON.parse(this.s.slice(start, this.i)) as string;
  }

  /** Go's number grammar. A number ends at the first byte that cannot continue it (Decode keeps it). */
  private number(): number {
    const start = this.i;
    if (this.s[this.i] === '-') this.i++;
    // A leading 0 stands alone (`01` is the number 0, then a stray byte).
    if (this.s[this.i] === '0') this.i++;
    else this.digits('in numeric literal');
    if (this.s[this.i] === '.') {
      this.i++;
      this.digits('after decimal point in numeric literal');
    }
    if (this.s[this.i] === 'e' || this.s[this.i] === 'E') {
      this.i++;
      if (this.s[this.i] === '+' || this.s[this.i] === '-') this.i++;
      this.digits('in exponent of numeric literal');
    }
    return Number(this.s.slice(start, this.i));
  }

  /** A run of digits; the first must be there (`context`: Go's wording for the byte found instead). */
  private digits(context: string): void {
    const c = this.peek();
    if (!isDigit(c)) this.fail(c, context);
    while (isDigit(this.s[this.i])) this.i++;
  }

  private literal<T>(word: string, v: T): T {
    this.ahead(word.length - 1, (c, k) => c === word[k], (k) => `in literal ${word} (expecting ${quoteChar(word[k]!)})`);
    this.i += word.length;
    return v;
  }

  /** The `n` bytes after the current one must each pass `ok`; Go's error is at the first that does not (`context` gets its offset). */
  private ahead(n: number, ok: (c: string, k: number) => boolean, context: (k: number) => string): void {
    for (let k = 1; k <= n; k++) {
      const c = this.peek(k);
      if (!ok(c, k)) {
        this.i += k;
        this.fail(c, context(k));
      }
    }
  }
}
