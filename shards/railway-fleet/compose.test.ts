import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * The file's structure, read with the `yaml` package (merge keys resolved as Compose resolves
 * them): what the runners need from the fleet beyond what the Compose schema can say.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
type Service = { image?: string; build?: string; environment?: Record<string, string>; ports?: string[]; network_mode?: string; depends_on?: string[]; ulimits?: { nofile?: { soft: number; hard: number } } };
const doc = parse(readFileSync(ROOT + 'docker-compose.yml', 'utf8'), { merge: true }) as { services: Record<string, Service> };
const services = doc.services;

describe('docker-compose.yml', () => {
  it('every service has an image or the one build; built ones name an entry that exists', () => {
    for (const [name, s] of Object.entries(services)) {
      expect(Boolean(s.image) !== Boolean(s.build), `${name}: exactly one of image/build`).toBe(true);
      if (s.build) {
        expect(s.build, name).toBe('.');
        const entry = s.environment?.SERVICE_ENTRY;
        expect(entry, `${name}: SERVICE_ENTRY`).toBeTruthy();
        expect(existsSync(ROOT + entry!), `${name}: ${entry}`).toBe(true);
        expect(s.environment!.HOST, name).toBe('0.0.0.0');
      }
    }
  });

  it('has two runner shards that take their targets by name from services that exist, with a required token', () => {
    const runners = Object.entries(services).filter(([, s]) => s.environment?.SERVICE_ENTRY === 'shards/runner/main.ts');
    expect(runners.map(([n]) => n)).toEqual(['runner-1', 'runner-2']);
    for (const [name, s] of runners) {
      const env = s.environment!;
      expect(env.BENCH_RUNNER_TOKEN, name).toMatch(/^\$\{BENCH_RUNNER_TOKEN:\?/);
      expect(env.BROADCAST_KEY, name).toMatch(/^\$\{BROADCAST_KEY:\?set BROADCAST_KEY/);
      expect(env.REBOUND_ALLOW_REMOTE_TARGETS).toBe('1');
      const targets = Object.entries(env).filter(([k]) => /^TARGET_[A-Z_]+_URL$/.test(k));
      expect(targets.length).toBeGreaterThanOrEqual(4);
      for (const [k, v] of targets) {
        const u = new URL(v);
        const svc = services[u.hostname];
        expect(svc, `${name} ${k} → ${u.hostname}`).toBeDefined();
        expect(u.port, `${name} ${k}: the target's PORT`).toBe(svc!.environment!.PORT);
        expect(s.depends_on, name).toContain(u.hostname);
      }
      expect(s.ulimits?.nofile?.soft).toBeGreaterThanOrEqual(20_000);
    }
  });

  it('has a Redis', () => {
    expect(services.redis?.image).toMatch(/^redis:/);
    expect(services.redis?.ports).toContain('6379:6379');
  });

  it('published host ports are unique and well formed; host-network services publish none', () => {
    const host: string[] = [];
    for (const [name, s] of Object.entries(services)) {
      if (s.network_mode === 'host') expect(s.ports, name).toBeUndefined();
      for (const p of s.ports ?? []) {
        expect(p, name).toMatch(/^\d{2,5}:\d{2,5}$/);
        host.push(p.split(':')[0]!);
      }
    }
    expect(new Set(host).size).toBe(host.length);
  });
});

/**
 * And the real validator: Debian's docker-compose (1.29, installed by .ci/run) checks the file
 * against the Compose schema without a Docker engine.
 */
describe('docker-compose config', () => {
  const config = (env: Record<string, string>) => spawnSync('docker-compose', ['-f', ROOT + 'docker-compose.yml', 'config', '-q'], { env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60_000 });

  it('accepts the file', () => {
    const r = config({ BENCH_RUNNER_TOKEN: 'k'.repeat(16), BROADCAST_KEY: 'key' });
    expect(r.error, 'docker-compose is installed (apt-get install docker-compose)').toBeUndefined();
    expect(r.status, r.stderr).toBe(0);
  });

  it('refuses to configure the runners without a token', () => {
    const r = config({ BENCH_RUNNER_TOKEN: '', BROADCAST_KEY: 'key' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('set BENCH_RUNNER_TOKEN');
  });

  it('refuses to configure the targets without a broadcast key, naming it (they would exit 2 on HOST=0.0.0.0)', () => {
    const r = config({ BENCH_RUNNER_TOKEN: 'k'.repeat(16), BROADCAST_KEY: '' });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('set BROADCAST_KEY');
  });
});
