import { AppConfig } from '../../src/core/config/app-config.js';
import {
  JINJA_UNSUPPORTED,
  ModelCompiler,
  PYTHON_UNSUPPORTED,
  type CompileResult,
  type ModelFile,
} from '../../src/modules/data-model/compiler/model-compiler.js';
import { expectApiError } from '../support/service.js';

/**
 * Cube's real schema compiler, run by ModelCompiler in warm sandboxed children (the child is the
 * compiled one in the build the tests use: `dist/`, or TEST_DIST_DIR). Each compile uses a child
 * of its own, so one compile checks many files where the assertions allow.
 */

const made: ModelCompiler[] = [];

/** A compiler with no warm child (each compile starts its own), closed after the tests. */
function compilerWith(env: Record<string, string> = {}): ModelCompiler {
  const compiler = new ModelCompiler(
    new AppConfig('api', { NODE_ENV: 'test', MODEL_COMPILE_POOL_SIZE: '0', SANDBOX_NICENESS: '0', ...env }),
  );
  made.push(compiler);
  return compiler;
}

/** The one most tests use: one warm child, as in an API process. */
const compiler = compilerWith({ MODEL_COMPILE_POOL_SIZE: '1' });

beforeAll(async () => {
  compiler.onApplicationBootstrap();
  await compiler.whenWarm();
});

afterAll(async () => {
  await Promise.all(made.map((c) => c.onApplicationShutdown()));
});

const ORDERS_YML = `cubes:
  - name: orders
    sql_table: public.orders
    joins:
      - name: users
        sql: "{CUBE}.user_id = {users}.id"
        relationship: many_to_one
    measures:
      - name: count
        type: count
      - name: total
        sql: amount
        type: sum
    dimensions:
      - name: id
        sql: id
        type: number
        primary_key: true
      - name: status
        sql: status
        type: string
`;

const USERS_JS = `cube(\`users\`, {
  sql_table: \`public.users\`,
  measures: { count: { type: \`count\` } },
  dimensions: {
    id: { sql: \`id\`, type: \`number\`, primary_key: true },
    city: { sql: \`city\`, type: \`string\` },
  },
});
`;

const SALES_VIEW_YML = `views:
  - name: sales
    cubes:
      - join_path: orders
        includes: [count, total, status]
      - join_path: orders.users
        prefix: true
        includes: [city]
`;

/** A cube /meta does not list: nothing in it is public. */
const INTERNAL_YML = `cubes:
  - name: internal_audit
    sql_table: audit
    public: false
    measures:
      - name: count
        type: count
`;

function file(fileName: string, content: string): ModelFile {
  return { fileName, content };
}

/** The errors by file, for assertions that do not depend on their order. */
function errorsByFile(result: CompileResult): Record<string, string[]> {
  const byFile: Record<string, string[]> = {};
  for (const { fileName, message } of result.errors) (byFile[fileName ?? '-'] ??= []).push(message);
  return byFile;
}

describe('ModelCompiler', () => {
  it('compiles YAML and JS cubes and a view, counting what /meta lists and ignoring non-model files', async () => {
    const result = await compiler.compile([
      file('model/cubes/orders.yml', ORDERS_YML),
      file('model/cubes/users.js', USERS_JS),
      file('model/views/sales.yml', SALES_VIEW_YML),
      file('model/cubes/internal.yaml', INTERNAL_YML),
      // Not model files: the project's configuration, docs and Python other than globals.py.
      file('cube.js', 'module.exports = { this is not even JavaScript'),
      file('cube.py', 'from cube import config'),
      file('README.md', '# {{ not jinja }}'),
      file('package.json', '{}'),
      file('model/helpers/util.py', 'def f(): pass'),
      file('model/README.md', 'notes'),
    ]);
    const { summary, ...verdict } = result;
    expect(verdict).toEqual({ valid: true, errors: [], cubesCount: 3, definitive: true });
    // The compiled model as review compares it (issue 33): every cube and view, sorted, with its file.
    expect(summary?.cubes.map((c) => [c.name, c.kind, c.fileName, c.public])).toEqual([
      ['internal_audit', 'cube', 'cubes/internal.yaml', false],
      ['orders', 'cube', 'cubes/orders.yml', true],
      ['sales', 'view', 'views/sales.yml', true],
      ['users', 'cube', 'cubes/users.js', true],
    ]);
    const [internal, orders, sales] = summary!.cubes;
    expect(internal.members).toEqual([
      { name: 'count', kind: 'measure', type: 'count', public: false, attributes: {} },
    ]);
    expect(orders.members.map((m) => [m.kind, m.name, m.type, m.public])).toEqual([
      ['measure', 'count', 'count', true],
      ['measure', 'total', 'sum', true],
      ['dimension', 'id', 'number', true],
      ['dimension', 'status', 'string', true],
    ]);
    expect(orders.members[1].attributes).toEqual({ sql: expect.stringContaining('amount') });
    expect(orders.members[2].attributes).toEqual({ primaryKey: true, sql: expect.stringContaining('id') });
    expect(orders.joins).toEqual([
      { name: 'users', relationship: 'belongsTo', sql: expect.stringContaining('user_id') },
    ]);
    expect(orders).toMatchObject({
      attributes: { sqlTable: expect.stringContaining('public.orders') },
      preAggregations: [],
      accessPolicy: null,
    });
    // A view's members: the type of the member it includes, and which one it is.
    expect(sales.members.map((m) => [m.kind, m.name, m.type, m.attributes.aliasMember])).toEqual([
      ['measure', 'count', 'count', 'orders.count'],
      ['measure', 'total', 'sum', 'orders.total'],
      ['dimension', 'status', 'string', 'orders.status'],
      ['dimension', 'users_city', 'string', 'users.city'],
    ]);
    // It took the warm child, and another is warming in its place.
    expect(compiler.stats()).toMatchObject({ servedWarm: 1 });
  });

  it('leaves its last warm child to others when asked to spare it (an account that floods)', async () => {
    await compiler.whenWarm();
    const before = compiler.stats();
    expect(before.warm).toBe(1);
    const result = await compiler.compile([file('model/cubes/users.js', USERS_JS)], { spareWarm: true });
    expect(result).toMatchObject({ valid: true, cubesCount: 1 });
    // A child was started for it; the warm one was not taken, and is still there for the next.
    const after = compiler.stats();
    expect(after.servedWarm).toBe(before.servedWarm);
    expect(after.started).toBe(before.started + 1);
    expect(after.warm).toBe(1);
    await compiler.compile([file('model/cubes/users.js', USERS_JS)]);
    expect(compiler.stats().servedWarm).toBe(before.servedWarm + 1);
  });

  it('an empty model is valid, with no cubes', async () => {
    await expect(compiler.compile([])).resolves.toEqual({
      valid: true,
      errors: [],
      cubesCount: 0,
      definitive: true,
      summary: { cubes: [] },
    });
    await expect(compiler.compile([file('README.md', '# empty')])).resolves.toEqual({
      valid: true,
      errors: [],
      cubesCount: 0,
      definitive: true,
      summary: { cubes: [] },
    });
  });

  it("reports each file's errors under its name: YAML, types, JS syntax, views, require, Jinja, Python", async () => {
    const result = await compiler.compile([
      // Two good files, which bring no errors of their own.
      file('model/cubes/orders.yml', ORDERS_YML),
      file('model/cubes/users.js', USERS_JS),
      file('model/cubes/indented.yml', 'cubes:\n  - name: a\n    sql_table: a\n     measures: []\n'),
      file(
        'model/cubes/typed.yml',
        'cubes:\n  - name: typed\n    sql_table: t\n    measures:\n      - name: n\n        type: countt\n',
      ),
      file(
        'model/cubes/broken.js',
        'cube(`broken`, { sql_table: `b`, measures: { n: { type: `count` } ) });',
      ),
      file(
        'model/views/missing.yml',
        'views:\n  - name: missing\n    cubes:\n      - join_path: orders\n        includes: [nope]\n',
      ),
      file('model/cubes/fs.js', "const fs = require('fs');\ncube(`reads`, { sql_table: `r` });"),
      file('model/cubes/throws.js', "throw new Error('thrown at the top of a model');"),
      file(
        'model/cubes/templated.yml.jinja',
        'cubes:\n{% for n in range(3) %}\n  - name: c{{ n }}\n{% endfor %}\n',
      ),
      file('model/cubes/inline.yml', 'cubes:\n  - name: inline\n    sql_table: "{{ schema }}.t"\n'),
      file('model/globals.py', 'from cube import TemplateContext'),
    ]);

    expect(result.valid).toBe(false);
    expect(result.definitive).toBe(true);
    expect(result.cubesCount).toBe(0);
    const byFile = errorsByFile(result);
    expect(Object.keys(byFile).sort()).toEqual([
      'model/cubes/broken.js',
      'model/cubes/fs.js',
      'model/cubes/indented.yml',
      'model/cubes/inline.yml',
      'model/cubes/templated.yml.jinja',
      'model/cubes/throws.js',
      'model/cubes/typed.yml',
      'model/globals.py',
      'model/views/missing.yml',
    ]);
    expect(byFile['model/cubes/indented.yml']).toEqual([expect.stringContaining('bad indentation')]);
    expect(byFile['model/cubes/typed.yml']).toEqual([
      expect.stringMatching(/^typed cube: \(measures\.n\.type = countt\) must be one of \[count, /),
    ]);
    expect(byFile['model/cubes/broken.js']).toEqual([
      expect.stringMatching(/^Syntax error during parsing: /),
    ]);
    expect(byFile['model/views/missing.yml']).toEqual([
      "missing cube: Member 'nope' is included in 'missing' but not defined in any cube",
    ]);
    expect(byFile['model/cubes/fs.js']).toEqual(["Package 'fs' not found"]);
    expect(byFile['model/cubes/throws.js']).toEqual(['thrown at the top of a model']);
    expect(byFile['model/cubes/templated.yml.jinja']).toEqual([JINJA_UNSUPPORTED]);
    expect(byFile['model/cubes/inline.yml']).toEqual([JINJA_UNSUPPORTED]);
    expect(byFile['model/globals.py']).toEqual([PYTHON_UNSUPPORTED]);
  });

  it("a JS model that escapes the compiler's vm reads no secret of the API process", async () => {
    const secret = `s3cret-${process.pid}-${Date.now()}`;
    process.env.SOME_SECRET = secret;
    try {
      // Each model asks a host function constructor for `process` and puts its environment's
      // secret into a cube name, or failing that into an error message (the compiler keeps one
      // of identical messages, so each names its way).
      const leak = (way: string, getProcess: string) =>
        `let name;
        try { name = 'leak_' + (${getProcess}).env.SOME_SECRET; } catch (e) { throw new Error('${way}: ' + e.message); }
        cube(name, { sql_table: 't', measures: { count: { type: 'count' } } });`;
      const result = await compiler.compile([
        file('model/cubes/via_this.js', leak('this', "this.constructor.constructor('return process')()")),
        file('model/cubes/via_cube.js', leak('cube', "cube.constructor('return process')()")),
        // An async method of the compiler itself, which the Funnels extension hands to models.
        file(
          'model/cubes/via_async.js',
          `asyncModule(async () => {
            ${leak('async', "await require('Funnels').compiler.doCompile.constructor('return process')()")}
          });`,
        ),
      ]);

      expect(JSON.stringify(result)).not.toContain(secret);
      expect(result.valid).toBe(false);
      const refused = 'Code generation is not allowed in a data model';
      expect(errorsByFile(result)).toEqual({
        'model/cubes/via_this.js': [`this: ${refused}`],
        'model/cubes/via_cube.js': [`cube: ${refused}`],
        // An async module's error ends the compile; the compiler does not say whose it was.
        '-': [`async: ${refused}`],
      });
    } finally {
      delete process.env.SOME_SECRET;
    }
  });

  it('kills a compile that runs past its time', async () => {
    const result = await compilerWith({ MODEL_COMPILE_TIMEOUT_MS: '2000' }).compile([
      file('model/cubes/orders.yml', ORDERS_YML),
      file('model/cubes/spins.js', 'for (;;) {}'),
    ]);
    expect(result).toEqual({
      valid: false,
      errors: [{ message: 'Compilation timed out after 2000 ms' }],
      cubesCount: 0,
      definitive: false,
    });
  });

  it('a compile that outgrows its heap cap fails instead of hanging', async () => {
    const result = await compilerWith({ MODEL_COMPILE_MEMORY_MB: '256' }).compile([
      file(
        'model/cubes/hoards.js',
        'const hoard = [];\nfor (;;) hoard.push(new Array(100000).fill(hoard.length));',
      ),
    ]);
    expect(result).toEqual({
      valid: false,
      errors: [{ message: 'Compilation ran out of memory (limit 256 MB)' }],
      cubesCount: 0,
      definitive: false,
    });
  });

  it('a compile that holds memory outside the V8 heap (Buffers) meets the data limit', async () => {
    // The model reaches its child's realm through a link url (rebuilt by the compiler with the
    // host's Function) and allocates 2 GB of Buffers, which the heap cap does not count.
    const payload = Buffer.from(
      "const held = []; for (let i = 0; i < 8; i++) held.push(Buffer.alloc(256 * 1024 * 1024, 1)); throw new Error('allocated ' + held.length * 256 + ' MB');",
    ).toString('base64');
    const result = await compilerWith({ MODEL_COMPILE_MEMORY_MB: '512' }).compile([
      file(
        'model/cubes/buffers.js',
        `cube('buffers', { sql_table: 't', dimensions: { id: { sql: 'id', type: 'number', primary_key: true,
          links: [{ name: 'go', label: 'go', url: Function(atob('${payload}'))() }] } } });`,
      ),
    ]);
    expect(result.valid).toBe(false);
    expect(JSON.stringify(result)).not.toContain('allocated 2048 MB');
    expect(result.errors).toEqual([
      {
        message: expect.stringMatching(
          /Array buffer allocation failed|Failed to allocate memory|ran out of memory|stopped unexpectedly/,
        ),
      },
    ]);
  });

  it('answers compiler_unavailable, saying why, where the sandbox cannot be built, and starts nothing', async () => {
    const unsandboxed = compilerWith({ SANDBOX_BWRAP_PATH: '/nonexistent/bwrap' });
    const error = await expectApiError(
      unsandboxed.compile([file('model/cubes/orders.yml', ORDERS_YML)]),
      503,
      'compiler_unavailable',
    );
    expect(error).toMatchObject({
      message:
        'The model compiler sandbox cannot be set up: bubblewrap (bwrap, Debian package bubblewrap) is not installed',
    });
    expect(unsandboxed.stats().started).toBe(0);
  });
});
