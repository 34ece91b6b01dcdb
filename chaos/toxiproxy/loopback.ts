import { lookup as dnsLookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';

/**
 * The project's promise is loopback-only load: unless the operator opts in (`--allow-public`,
 * REBOUND_ALLOW_PUBLIC=1), the chaos proxy binds and dials 127.0.0.0/8 and ::1 only.
 */
export function isLoopbackAddress(address: string): boolean {
  const a = address.replace(/^\[|\]$/g, '').toLowerCase();
  if (a === '::1') return true;
  const v4 = a.startsWith('::ffff:') ? a.slice(7) : a;
  return isIP(v4) === 4 && v4.startsWith('127.');
}

/** Marks a dial error raised by `loopbackOnlyLookup` (a refusal, not a network failure). */
export const NOT_LOOPBACK = Symbol('rebound.notLoopback');

/**
 * A `net.connect` lookup that refuses non-loopback answers. The loopback rule is enforced here,
 * at dial time, rather than when an upstream is stored: Toxiproxy stores any upstream string
 * (clients rely on it: the official suite updates a proxy to `somehost:12345`), and a name's
 * answer can change after it was stored anyway.
 */
export const loopbackOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, options, (err, address, family) => {
    if (err) return callback(err, address, family);
    const list = Array.isArray(address) ? address : [{ address, family }];
    const outside = list.find((a) => !isLoopbackAddress(a.address));
    if (outside) {
      const e = Object.assign(new Error(`upstream ${hostname} resolved to non-loopback ${outside.address}`), { code: 'EACCES', [NOT_LOOPBACK]: true }) as NodeJS.ErrnoException;
      return callback(e, address, family);
    }
    callback(null, address, family);
  });
};

export const PUBLIC_OPT_IN = 'start the chaos proxy with --allow-public (or REBOUND_ALLOW_PUBLIC=1) to allow it';
