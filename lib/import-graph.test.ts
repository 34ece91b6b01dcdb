import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildGraph, checkImportGraph, parseImports, productionFiles, type ImportEdge } from './layers.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

const edge = (from: string, to: string): ImportEdge => ({ from, to, spec: to });

describe('import graph rules (synthetic graph)', () => {
  it('reads static, type, re-export, side-effect, dynamic and new URL imports, not comments or packages', () => {
    const src = [
      "import { a } from './a.ts';",
      "import type { B } from '../b.ts';",
      "export { c } from './c.ts';",
      "import './d.ts';",
      "const e = await import('./e.ts');",
      "spawn(fileURLToPath(new URL('./f.ts', import.meta.url)));",
      "import { z } from 'vitest';",
      "// import { no } from './comment.ts';",
      "/* import('./block.ts') */",
      "const dir = new URL('../', import.meta.url);",
    ].join('\n');
    expect(parseImports(src).sort()).toEqual(['../b.ts', './a.ts', './c.ts', './d.ts', './e.ts', './f.ts']);
  });

  it('flags an upward import, a transport importing the other transport, two runners importing each other and a cross-folder circle', () => {
    const files = ['shards/run.ts', 'cli/main.ts', 'runners/a/run.ts', 'runners/b/run.ts', 'runners/b/page.ts', 'runners/c/run.ts', 'runners/modules.ts', 'engine/x.ts', 'chaos/p.ts', 'lib/u.ts'];
    const edges = [
      edge('cli/main.ts', 'shards/run.ts'), // same rank, forbidden
      edge('runners/a/run.ts', 'runners/b/run.ts'), // a builds on b ...
      edge('runners/b/page.ts', 'runners/a/run.ts'), // ... and b on a: a circle of runner folders
      edge('runners/c/run.ts', 'runners/b/run.ts'), // c builds on b alone: fine
      edge('runners/modules.ts', 'runners/a/run.ts'), // the module list may name runners
      edge('engine/x.ts', 'chaos/p.ts'), // downward: fine
      edge('chaos/p.ts', 'lib/u.ts'), // downward: fine
      edge('lib/u.ts', 'engine/x.ts'), // upward, and closes engine -> chaos -> lib -> engine
    ];
    const v = checkImportGraph(files, edges);
    const keyed = v.map((x) => `${x.rule} ${x.file} -> ${x.import}`).sort();
    expect(keyed).toEqual(
      [
        'cross-folder-cycle chaos/p.ts -> lib/u.ts',
        'cross-folder-cycle engine/x.ts -> chaos/p.ts',
        'cross-folder-cycle lib/u.ts -> engine/x.ts',
        'layer cli/main.ts -> shards/run.ts',
        'layer lib/u.ts -> engine/x.ts',
        'runner-circle runners/a/run.ts -> runners/b/run.ts',
        'runner-circle runners/b/page.ts -> runners/a/run.ts',
      ].sort(),
    );
    expect(v.find((x) => x.rule === 'layer' && x.file === 'lib/u.ts')!.message).toMatch(/engine\/ is above lib\//);
    expect(v.find((x) => x.file === 'cli/main.ts')!.message).toMatch(/share a layer/);
  });

  it('lets tests and helpers imported only by tests import anything; an entry nothing imports stays production', () => {
    const files = ['lib/helper.ts', 'lib/helper2.ts', 'lib/a.test.ts', 'lib/entry.ts', 'engine/e.ts'];
    const edges = [edge('lib/a.test.ts', 'lib/helper.ts'), edge('lib/helper.ts', 'lib/helper2.ts'), edge('lib/helper2.ts', 'engine/e.ts'), edge('lib/entry.ts', 'engine/e.ts')];
    expect([...productionFiles(files, edges)].sort()).toEqual(['engine/e.ts', 'lib/entry.ts']);
    expect(checkImportGraph(files, edges).map((x) => x.file)).toEqual(['lib/entry.ts']);
  });
});

describe('import graph of the tracked tree', () => {
  it('obeys the declared layers (bench > cli, shards > runners > engine > chaos > services > lib)', () => {
    const files = execFileSync('git', ['ls-files', '*.ts'], { cwd: ROOT, encoding: 'utf8' }).split('\n').filter(Boolean);
    const edges = buildGraph(files, (f) => readFileSync(join(ROOT, f), 'utf8'));
    expect(edges.length).toBeGreaterThan(files.length); // the parser found the tree's imports
    const violations = checkImportGraph(files, edges);
    // One line per violation so the whole list is read in one run, not one failure at a time.
    expect(violations.map((v) => `[${v.rule}] ${v.message}`).join('\n')).toBe('');
  });
});
