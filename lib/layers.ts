import { dirname, posix } from 'node:path';

/**
 * The declared layers, top first. A production file may import only from its own layer or a
 * layer below; folders that share a rank (cli/ and shards/: two transports) never import each
 * other. This list is the one statement of the order: docs/architecture.md describes it and
 * lib/import-graph.test.ts holds the tree to it.
 */
export const LAYERS: readonly (readonly string[])[] = [['bench'], ['cli', 'shards'], ['runners'], ['engine'], ['chaos'], ['services'], ['lib']];

/** Rank of a top-level folder: 0 is the top; undefined for a folder outside the layers. */
export function layerRank(folder: string): number | undefined {
  const i = LAYERS.findIndex((l) => l.includes(folder));
  return i < 0 ? undefined : i;
}

export const topFolder = (file: string): string => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '.');

/** A runner's own folder (`runners/<name>`), or undefined for runners/ top-level files and other layers. */
function runnerFolder(file: string): string | undefined {
  const parts = file.split('/');
  return parts[0] === 'runners' && parts.length > 2 ? parts[1] : undefined;
}

/** Test files and the helpers only they import, which may import anything. */
export const isTestFile = (file: string): boolean => /\.test\.ts$/.test(file) || file === 'vitest.config.ts';

export interface ImportEdge {
  from: string;
  to: string;
  /** The specifier as written, for the message. */
  spec: string;
}

export interface Violation {
  rule: 'layer' | 'runner-circle' | 'cross-folder-cycle';
  file: string;
  import: string;
  message: string;
}

/**
 * Relative specifiers a file imports: static and dynamic `import`, `export ... from`, and
 * `new URL('x.ts', import.meta.url)` (a file a process is spawned on). Comments are dropped first
 * so prose that quotes an import does not count. Non-literal dynamic imports cannot be read and
 * are not counted.
 */
export function parseImports(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const specs: string[] = [];
  const patterns = [
    /\b(?:import|export)\s[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]/g,
    /\bimport\s*['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\bnew\s+URL\(\s*['"]([^'"]+\.ts)['"]\s*,\s*import\.meta\.url\s*\)/g,
  ];
  for (const re of patterns) for (const m of code.matchAll(re)) if (m[1]?.startsWith('.')) specs.push(m[1]);
  return specs;
}

/** Resolves `spec` from `file` against the set of tracked files; undefined when it names no tracked .ts file. */
export function resolveImport(file: string, spec: string, files: ReadonlySet<string>): string | undefined {
  const base = posix.normalize(posix.join(dirname(file), spec));
  for (const c of [base, `${base}.ts`, `${base}/index.ts`]) if (files.has(c)) return c;
  return undefined;
}

/** Every resolved edge of the tracked files, given a reader of each file's text. */
export function buildGraph(files: readonly string[], read: (file: string) => string): ImportEdge[] {
  const set = new Set(files);
  const edges: ImportEdge[] = [];
  for (const from of files) {
    for (const spec of parseImports(read(from))) {
      const to = resolveImport(from, spec, set);
      if (to && to !== from) edges.push({ from, to, spec });
    }
  }
  return edges;
}

/**
 * Files held to the rules: every file that is not a test, less the helpers that only tests import
 * (found to a fixed point: a helper imported only by test helpers is one too). A file nothing
 * imports (an entry point) stays production.
 */
export function productionFiles(files: readonly string[], edges: readonly ImportEdge[]): Set<string> {
  const importers = new Map<string, Set<string>>();
  for (const e of edges) {
    let s = importers.get(e.to);
    if (!s) importers.set(e.to, (s = new Set()));
    s.add(e.from);
  }
  const testOnly = new Set(files.filter(isTestFile));
  for (let changed = true; changed; ) {
    changed = false;
    for (const f of files) {
      const by = importers.get(f);
      if (!testOnly.has(f) && by && [...by].every((i) => testOnly.has(i))) {
        testOnly.add(f);
        changed = true;
      }
    }
  }
  return new Set(files.filter((f) => !testOnly.has(f)));
}

/** Strongly connected components (Tarjan, iterative so a deep graph cannot overflow the stack). */
export function stronglyConnected(nodes: readonly string[], next: (n: string) => readonly string[]): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  let counter = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: { n: string; i: number }[] = [{ n: root, i: 0 }];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    onStack.add(root);
    while (work.length) {
      const top = work[work.length - 1]!;
      const succ = next(top.n);
      if (top.i < succ.length) {
        const w = succ[top.i++]!;
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ n: w, i: 0 });
        } else if (onStack.has(w)) low.set(top.n, Math.min(low.get(top.n)!, index.get(w)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1]!.n;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.n)!));
      }
      if (low.get(top.n) === index.get(top.n)) {
        const comp: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          comp.push(w);
        } while (w !== top.n);
        out.push(comp);
      }
    }
  }
  return out;
}

/**
 * The three rules over a file graph: (1) a production file imports only its own layer or below
 * (cli/ and shards/ not each other), (2) runner folders form no circle (a runner may build on
 * another's domain, as latency on jitter's run or deploy-impact on avalanche's restart, but two
 * runners never depend on each other), (3) no
 * import circle among production files spans two top-level folders. Each violation names the
 * file, the import and the rule.
 */
export function checkImportGraph(files: readonly string[], edges: readonly ImportEdge[]): Violation[] {
  const prod = productionFiles(files, edges);
  const out: Violation[] = [];
  const prodEdges = edges.filter((e) => prod.has(e.from) && prod.has(e.to));
  for (const e of edges) {
    if (!prod.has(e.from)) continue;
    const fromTop = topFolder(e.from);
    const toTop = topFolder(e.to);
    const fr = layerRank(fromTop);
    const tr = layerRank(toTop);
    if (fromTop !== toTop && fr !== undefined && tr !== undefined && tr <= fr) {
      const why = tr === fr ? `${fromTop}/ and ${toTop}/ share a layer and never import each other` : `${toTop}/ is above ${fromTop}/`;
      out.push({ rule: 'layer', file: e.from, import: e.spec, message: `${e.from} imports ${e.to}: ${why} (layers, top first: ${LAYERS.map((l) => l.join(' ')).join(' > ')})` });
    }
  }
  // Runner folders as nodes: an edge wherever a production file of one imports a file of another.
  const runnerEdges = prodEdges.filter((e) => runnerFolder(e.from) && runnerFolder(e.to) && runnerFolder(e.from) !== runnerFolder(e.to));
  const byRunner = new Map<string, string[]>();
  for (const e of runnerEdges) byRunner.set(runnerFolder(e.from)!, [...(byRunner.get(runnerFolder(e.from)!) ?? []), runnerFolder(e.to)!]);
  for (const comp of stronglyConnected([...byRunner.keys()], (n) => byRunner.get(n) ?? [])) {
    if (comp.length < 2) continue;
    const members = new Set(comp);
    for (const e of runnerEdges) {
      if (members.has(runnerFolder(e.from)!) && members.has(runnerFolder(e.to)!)) {
        out.push({ rule: 'runner-circle', file: e.from, import: e.spec, message: `${e.from} imports ${e.to}: runner folders ${comp.sort().map((r) => `runners/${r}`).join(', ')} import each other` });
      }
    }
  }
  const next = new Map<string, string[]>();
  for (const e of prodEdges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  for (const comp of stronglyConnected([...prod], (n) => next.get(n) ?? [])) {
    const folders = new Set(comp.map(topFolder));
    if (folders.size < 2) continue;
    const members = new Set(comp);
    for (const e of prodEdges) {
      if (members.has(e.from) && members.has(e.to) && topFolder(e.from) !== topFolder(e.to)) {
        out.push({ rule: 'cross-folder-cycle', file: e.from, import: e.spec, message: `${e.from} imports ${e.to} inside an import circle of ${comp.length} files spanning ${[...folders].sort().join(', ')}: ${comp.sort().join(' ')}` });
      }
    }
  }
  return out;
}
