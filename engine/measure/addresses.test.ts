import { describe, expect, it } from 'vitest';
import { isAllowedTargetUrl, isLoopbackUrl, sourceAddress } from './addresses.ts';

describe('target and source addresses', () => {
  it('accepts only loopback targets by default', () => {
    for (const u of ['http://127.0.0.1:3000', 'http://localhost:1', 'ws://127.9.8.7/cable', 'http://[::1]:80']) expect(isLoopbackUrl(u), u).toBe(true);
    for (const u of ['http://10.0.0.5:3000', 'http://192.168.1.1', 'http://example.com', 'http://127.0.0.1.nip.io', 'nonsense']) expect(isAllowedTargetUrl(u, {}), u).toBe(false);
  });

  it('allows remote targets only with the explicit opt-in, and never non-HTTP schemes', () => {
    expect(isAllowedTargetUrl('http://socketio.railway.internal:8080', { REBOUND_ALLOW_REMOTE_TARGETS: '1' })).toBe(true);
    expect(isAllowedTargetUrl('file:///etc/passwd', { REBOUND_ALLOW_REMOTE_TARGETS: '1' })).toBe(false);
    expect(isAllowedTargetUrl('http://socketio.railway.internal:8080', { REBOUND_ALLOW_REMOTE_TARGETS: 'yes' })).toBe(false);
  });

  it('deals clients round-robin over 127.0.0.x', () => {
    expect(sourceAddress(0)).toBe('127.0.0.1');
    expect(sourceAddress(1)).toBe('127.0.0.2');
    expect(sourceAddress(199)).toBe('127.0.0.200');
    expect(sourceAddress(200)).toBe('127.0.0.1');
    expect(sourceAddress(5, 2)).toBe('127.0.0.2');
  });
});
