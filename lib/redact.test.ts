import { describe, expect, it } from 'vitest';
import { redactUrlCredentials, redactUrlCredentialsDeep } from './redact.ts';

describe('redactUrlCredentials', () => {
  it('replaces the userinfo of every URL, in a bare URL and in free text, and leaves the rest as it was', () => {
    expect(redactUrlCredentials('http://user:pw@127.0.0.1:8080/cable?x=1')).toBe('http://***@127.0.0.1:8080/cable?x=1');
    expect(redactUrlCredentials('ws://tok@h/ws')).toBe('ws://***@h/ws');
    expect(redactUrlCredentials('connect to HTTPS://a:b@x.io failed; then wss://c:d@y.io/s')).toBe('connect to HTTPS://***@x.io failed; then wss://***@y.io/s');
    // The userinfo runs to the last @ of the authority, as a URL parser reads it.
    expect(redactUrlCredentials('http://a@b:p@w@host/x')).toBe('http://***@host/x');
    expect(redactUrlCredentials('http://user:p%40ss@host')).toBe('http://***@host');
  });

  it('leaves URLs without credentials and @ outside an authority alone', () => {
    for (const s of ['http://127.0.0.1:8080/a@b', 'http://host/?to=a@b', 'http://host#x@y', 'mail me at a@b.c', 'stream @all', 'http://host and user@example']) {
      expect(redactUrlCredentials(s), s).toBe(s);
    }
  });

  it('deep: every string of a result (nested, in arrays, keys) and nothing else', () => {
    const r = { params: { url: 'http://u:p@h:1', n: 5, ok: true, none: null }, list: ['ws://u:p@h/ws', 3], ['http://u:p@h']: 1 };
    expect(redactUrlCredentialsDeep(r)).toEqual({ params: { url: 'http://***@h:1', n: 5, ok: true, none: null }, list: ['ws://***@h/ws', 3], ['http://***@h']: 1 });
    expect(r.params.url).toBe('http://u:p@h:1');
  });
});
