import fs from 'node:fs';
import path from 'node:path';

/**
 * `src/hot-paths.ts` is what the bench baseline loads to run the service's own SQL and mappers
 * without the framework. Walks its static imports (type-only ones excluded) and fails on any
 * package other than Node's own.
 */
function runtimeImports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const specs: string[] = [];
  for (const m of text.matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+'([^']+)'/gms)) specs.push(m[1]);
  return specs;
}

function reachable(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [path.resolve(entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (files.has(file)) continue;
    files.add(file);
    for (const spec of runtimeImports(file)) {
      if (spec.startsWith('.')) queue.push(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
      else packages.add(spec);
    }
  }
  return { files, packages };
}

describe('the hot-path entry of the bench baseline', () => {
  const { files, packages } = reachable('src/hot-paths.ts');

  it('reaches the report SQL and the token lookup', () => {
    const rel = [...files].map((f) => path.relative(process.cwd(), f).split(path.sep).join('/'));
    expect(rel).toEqual(
      expect.arrayContaining(['src/modules/reports/report.sql.ts', 'src/modules/users/token.sql.ts']),
    );
  });

  it('loads no package but Node’s own', () => {
    expect([...packages].filter((p) => !p.startsWith('node:'))).toEqual([]);
  });
});
