import fs from 'node:fs';
import path from 'node:path';

/**
 * Each module owns its tables: SQL that names a table lives in the module whose entities define
 * it. Another module reads those rows through the owner's exported service, or joins a SQL
 * fragment the owner exports (then the text naming the table still lives with its owner).
 *
 * A "module" is a folder of `src/modules/`, or of `src/core/` (core/audit owns `audit_events`,
 * core/queue owns `job_outbox`). The table-to-module map comes from the `@Entity` decorators.
 */

function sources(dir: string): Array<[string, string]> {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => [path.join(dir, f).split(path.sep).join('/'), fs.readFileSync(path.join(dir, f), 'utf8')]);
}

/** `src/modules/reports/x.ts` → `reports`; `src/core/audit/x.ts` → `core/audit`. */
function moduleOf(file: string): string {
  const parts = file.split('/');
  if (parts[1] === 'modules') return parts[2];
  if (parts[1] === 'core' && parts.length > 3) return `core/${parts[2]}`;
  return 'app';
}

const SRC = sources('src');

const OWNER = new Map<string, string>();
for (const [file, text] of SRC) {
  for (const m of text.matchAll(/@Entity\(\s*'(\w+)'/g)) OWNER.set(m[1], moduleOf(file));
}

/** Where SQL names a table: after FROM, JOIN, INTO, UPDATE, TABLE, REFERENCES. */
const TABLE_POSITION = /\b(?:from|join|into|update|table|references)\s+("?)([a-z_][a-z0-9_]*)\1/gi;

/** Files allowed to name another module's table, each with its reason. Keep it short. */
const EXCEPTIONS: Record<string, string> = {};

function violations(): string[] {
  const found: string[] = [];
  for (const [file, text] of SRC) {
    const mine = moduleOf(file);
    const names = new Set<string>();
    for (const m of text.matchAll(TABLE_POSITION)) {
      const table = m[2].toLowerCase();
      const owner = OWNER.get(table);
      if (owner && owner !== mine) names.add(`${table} (owned by ${owner})`);
    }
    if (names.size > 0 && !(file in EXCEPTIONS)) found.push(`${file}: ${[...names].join(', ')}`);
  }
  return found;
}

/** The files a source file imports (static, re-exported and dynamic), as paths from the root. */
function importsOf(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]);
  return specifiers
    .filter((s) => s.startsWith('.'))
    .map((s) => path.posix.normalize(path.posix.join(path.posix.dirname(file), s)));
}

describe('module boundaries', () => {
  it('maps every entity table to a module', () => {
    expect(OWNER.size).toBeGreaterThan(30);
    expect(OWNER.get('reports')).toBe('reports');
    expect(OWNER.get('job_outbox')).toBe('core/queue');
  });

  it('finds SQL naming another module’s table (the check itself works)', () => {
    const probe = 'SELECT 1 FROM reports r JOIN "users" u ON u.id = r.user_id';
    const tables = [...probe.matchAll(TABLE_POSITION)].map((m) => m[2]);
    expect(tables).toEqual(['reports', 'users']);
  });

  it('keeps SQL naming a table inside the module that owns it', () => {
    expect(violations()).toEqual([]);
  });

  it('never imports another module’s repository: other modules go through its service', () => {
    const found = SRC.flatMap(([file, text]) =>
      importsOf(file, text)
        .filter((target) => target.endsWith('.repository.js') && moduleOf(target) !== moduleOf(file))
        .map((target) => `${file} imports ${target}`),
    );
    expect(found).toEqual([]);
  });

  it('lists no exception for a file that no longer needs one', () => {
    const stale = Object.keys(EXCEPTIONS).filter((file) => {
      const entry = SRC.find(([f]) => f === file);
      if (!entry) return true;
      const mine = moduleOf(file);
      return ![...entry[1].matchAll(TABLE_POSITION)].some((m) => {
        const owner = OWNER.get(m[2].toLowerCase());
        return owner !== undefined && owner !== mine;
      });
    });
    expect(stale).toEqual([]);
  });
});

describe('layers', () => {
  it('reads every kind of import (the check itself works)', () => {
    const probe = [
      "import { A } from '../../modules/users/a.js';",
      "export { B } from './b.js';",
      "const c = await import('../../modules/reports/c.js');",
      "import './side-effect.js';",
    ].join('\n');
    expect(importsOf('src/core/audit/x.ts', probe)).toEqual([
      'src/modules/users/a.js',
      'src/core/audit/b.js',
      'src/modules/reports/c.js',
      'src/core/audit/side-effect.js',
    ]);
  });

  it('core imports no module: modules build on core, never the other way', () => {
    const found = SRC.filter(([file]) => file.startsWith('src/core/')).flatMap(([file, text]) =>
      importsOf(file, text)
        .filter((target) => target.startsWith('src/modules/'))
        .map((target) => `${file} imports ${target}`),
    );
    expect(found).toEqual([]);
  });
});

/**
 * What one module may import from another: its module file, its services (`*.service.ts`), its
 * SQL fragments, its DTOs, its entities (for TypeORM relations), and the ports below, each with
 * its reason. Anything else (a repository, a job, a helper) is
 * the other module's own business.
 */
const PUBLIC_FILE =
  /^[a-z-]+\/(?:[a-z-]+\.module|[a-z-]+\.service|[a-z-]+\.fragments|dto\/[a-z-]+(?:\.dto)?|entities\/[a-z-]+\.entity)\.js$/;
const PORTS: Record<string, string> = {
  'deployments/deployment-scope.filter.js': 'the 404 rule every route under /deployments/{id} applies',
  'deployments/deployment-lifecycle.js': 'what a module does when a deployment is created or deleted',
  'users/owned-content.js': 'content a module keeps per owner, handed over when a user is deleted',
  'users/no-email.js': 'the placeholder address of a user provisioned without one (SCIM)',
  'workspace/workspace-content.js': 'a content kind’s branch of the workspace feed',
  'workspace/workbooks.shared.js': 'workbook metadata parsing and access-checked lookups',
  'embedding/embed-identity.js': 'how embed tenants and users are named (pure rules)',
  'data-api-client/data-api.client.js': 'the outbound client of a deployment’s data API',
  'data-model/model-imports.js': 'how generated files (a dbt sync’s cubes) enter a model',
  'data-model/content-impact.port.js': 'stored content a model change breaks (content-impact provides it)',
  'data-model/model-summary.js': 'the compiled model as review compares it (member diff, content impact)',
  'notifications/delivery/delivery.module.js': 'SMTP delivery: webhooks mail a disabled endpoint’s creator',
  'notifications/delivery/mailer.js': 'SMTP delivery: webhooks mail a disabled endpoint’s creator',
};

/** The pairs of modules that reach each other along `arrows` (from, to), as `a ⇄ b`. */
function cyclesOf(arrows: Array<[string, string]>): string[] {
  const edges = new Map<string, Set<string>>();
  for (const [from, to] of arrows) edges.set(from, (edges.get(from) ?? new Set()).add(to));
  const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
    [...(edges.get(from) ?? [])].some(
      (next) => next === to || (!seen.has(next) && (seen.add(next), reaches(next, to, seen))),
    );
  return [...edges.keys()].flatMap((a) =>
    [...edges.keys()].filter((b) => a < b && reaches(a, b) && reaches(b, a)).map((b) => `${a} ⇄ ${b}`),
  );
}

/** `src/modules/reports/x.js` → `reports/x.js`; anything outside src/modules → null. */
function inModules(target: string): string | null {
  return target.startsWith('src/modules/') ? target.slice('src/modules/'.length) : null;
}

describe('between modules', () => {
  const crossings = SRC.filter(([file]) => file.startsWith('src/modules/')).flatMap(([file, text]) =>
    importsOf(file, text).flatMap((target) => {
      const to = inModules(target);
      return to && to.split('/')[0] !== moduleOf(file) ? [{ file, to }] : [];
    }),
  );

  it('imports another module only through its module file, services, fragments, DTOs, entities and ports', () => {
    const found = crossings
      .filter(({ to }) => !PUBLIC_FILE.test(to) && !(to in PORTS))
      .map(({ file, to }) => `${file} imports ${to}`);
    expect(found).toEqual([]);
  });

  it('lists no port nobody imports', () => {
    const used = new Set(crossings.map(({ to }) => to));
    expect(Object.keys(PORTS).filter((port) => !used.has(port))).toEqual([]);
  });

  it('has no arrow running back up: the module graph has no cycle', () => {
    expect(cyclesOf(crossings.map(({ file, to }) => [moduleOf(file), to.split('/')[0]]))).toEqual([]);
  });

  it('finds a cycle, however long (the check itself works)', () => {
    expect(
      cyclesOf([
        ['reports', 'workspace'],
        ['workspace', 'users'],
        ['users', 'reports'],
      ]),
    ).toEqual(['reports ⇄ workspace', 'reports ⇄ users', 'users ⇄ workspace']);
    expect(
      cyclesOf([
        ['reports', 'workspace'],
        ['workspace', 'users'],
      ]),
    ).toEqual([]);
  });

  it('refuses a repository, a job or a helper of another module (the check itself works)', () => {
    for (const to of [
      'users/users.repository.js',
      'dbt-sync/dbt-sync.job.js',
      'workspace/workbooks.helpers.js',
    ])
      expect(PUBLIC_FILE.test(to) || to in PORTS).toBe(false);
    for (const to of ['users/users.module.js', 'users/api-keys.service.js', 'workspace/dto/shared.dto.js'])
      expect(PUBLIC_FILE.test(to)).toBe(true);
  });
});

describe('jobs', () => {
  it('decide on domain errors, never on an HTTP status (chosen at the edge)', () => {
    const found = SRC.filter(([file, text]) => file.endsWith('.job.ts') && /\bgetStatus\s*\(/.test(text)).map(
      ([file]) => file,
    );
    expect(found).toEqual([]);
  });
});

describe('one unit of work', () => {
  const outsideDatabase = SRC.filter(([file]) => !file.startsWith('src/core/database/'));

  it('passes no transaction by hand: no code takes an EntityManager or a QueryRunner', () => {
    const found = outsideDatabase
      .filter(([, text]) => /\b(EntityManager|QueryRunner)\b/.test(text))
      .map(([file]) => file);
    expect(found).toEqual([]);
  });

  it('opens transactions only through Database.transaction', () => {
    const found = outsideDatabase
      .filter(([, text]) => /\b(dataSource|manager|connection)\s*\.\s*transaction\s*\(/i.test(text))
      .map(([file]) => file);
    expect(found).toEqual([]);
  });
});
