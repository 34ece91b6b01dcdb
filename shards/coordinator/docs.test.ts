import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COORD_OPTIONS } from './options.ts';
import { REBASELINE_OPTIONS } from '../manifest/options.ts';
import { FLEET_OPTIONS } from '../railway-fleet/cli.ts';

describe('docs/env.md and docs/coordinator.md', () => {
  const env = readFileSync(new URL('../../docs/env.md', import.meta.url), 'utf8');
  const coord = readFileSync(new URL('../../docs/coordinator.md', import.meta.url), 'utf8');
  it.each([['coordinator', COORD_OPTIONS], ['rebaseline', REBASELINE_OPTIONS], ['fleet', FLEET_OPTIONS]] as const)('every %s env var is documented', (_n, table) => {
    for (const spec of Object.values(table)) for (const e of (spec as { env?: readonly string[] }).env ?? []) expect(env, e).toContain(`\`${e}\``);
  });
  it('every coordinator flag is in docs/coordinator.md', () => {
    const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
    for (const k of Object.keys(COORD_OPTIONS)) expect(coord, k).toContain(`\`--${kebab(k)}\``);
  });
});
