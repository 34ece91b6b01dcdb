/**
 * Source addresses for client sockets. One source IP has ~28K ephemeral ports (32768-60999 here);
 * spreading clients over 127.0.0.1..127.0.0.N multiplies that. Only loopback targets are allowed,
 * so only loopback sources are produced.
 */
export function sourceAddress(index: number, perAddress = 20_000, maxAddresses = 250): string | undefined {
  const slot = Math.floor(index / perAddress);
  if (slot === 0) return undefined; // the kernel's default source keeps small runs unchanged
  return `127.0.0.${(slot % maxAddresses) + 1}`;
}

/** Rebound only loads loopback: refuse any other target before a single socket opens. */
export function isLoopbackUrl(url: string): boolean {
  try {
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  } catch {
    return false;
  }
}
