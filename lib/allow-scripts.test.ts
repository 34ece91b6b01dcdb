import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * `npm ci` warns about every dependency with an install script that package.json's allowScripts
 * does not approve; the README promises a clean install. The lockfile says which ones have one.
 */
describe('npm configuration', () => {
  it('allowScripts approves every locked dependency that has an install script (esbuild)', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { allowScripts?: Record<string, boolean> };
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(withScripts).toContain('esbuild');
    for (const name of withScripts) expect(pkg.allowScripts?.[name], `${name} has an install script`).toBe(true);
  });
});
