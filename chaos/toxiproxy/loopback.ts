import { lookup as dnsLookup } from 'node:dns';
import { lookup } from 'node:dns/promises';
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

/** Every address `host` resolves to is loopback (an IP literal is checked as is; "" means localhost). */
export async function resolvesToLoopback(host: string): Promise<boolean> {
  if (host === '') return true;
  if (isIP(host.replace(/^\[|\]$/g, ''))) return isLoopbackAddress(host);
  try {
    const all = await lookup(host, { all: true });
    return all.length > 0 && all.every((a) => isLoopbackAddress(a.address));
  } catch {
    return false;
  }
}

/**
 * A `net.connect` lookup that refuses non-loopback answers, so a name that resolved to loopback
 * when the proxy was created cannot be re-pointed at a public host later.
 */
export const loopbackOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, options, (err, address, family) => {
    if (err) return callback(err, address, family);
    const list = Array.isArray(address) ? address : [{ address, family }];
    const outside = list.find((a) => !isLoopbackAddress(a.address));
    if (outside) {
      const e = Object.assign(new Error(`upstream ${hostname} resolved to non-loopback ${outside.address}`), { code: 'EACCES' }) as NodeJS.ErrnoException;
      return callback(e, address, family);
    }
    callback(null, address, family);
  });
};

export const PUBLIC_OPT_IN = 'start the chaos proxy with --allow-public (or REBOUND_ALLOW_PUBLIC=1) to allow it';
