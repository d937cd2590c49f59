import { prepareCompiler, type PrepareCompilerOptions } from '@cubejs-backend/schema-compiler';
import { AppConfig } from '../../src/core/config/app-config.js';
import { ModelCompiler } from '../../src/modules/data-model/compiler/model-compiler.js';
import { generateCubeFiles, type GeneratedModel } from '../../src/modules/dbt-sync/converter/generate.js';
import { dbtFixture, manifest, modelNode } from '../fixtures/dbt/manifests.js';

/**
 * The files the dbt converter writes, compiled by Cube's real schema compiler (ModelCompiler's
 * child process, from the build the tests use: `dist/`, or TEST_DIST_DIR). Each compile starts a
 * process, so each test compiles one whole generated model.
 */

const compiler = new ModelCompiler(
  new AppConfig('api', {
    NODE_ENV: 'test',
    MODEL_COMPILE_TIMEOUT_MS: '120000',
    MODEL_COMPILE_MEMORY_MB: '1024',
    MODEL_COMPILE_POOL_SIZE: '1',
    SANDBOX_NICENESS: '0',
  }),
);

beforeAll(() => compiler.onApplicationBootstrap());
afterAll(() => compiler.onApplicationShutdown());

async function compile(generated: GeneratedModel) {
  return compiler.compile(generated.files.map((f) => ({ fileName: f.path, content: f.content })));
}

describe('generated data models compile with Cube', () => {
  it.each([
    'cube_dbt/manifest.json',
    'dbt-core/v10/manifest.json',
    'dbt-core/v11/manifest.json',
    'dbt-core/v12/manifest.json',
  ])('%s', async (name) => {
    const generated = generateCubeFiles(dbtFixture(name));
    await expect(compile(generated)).resolves.toEqual({
      valid: true,
      errors: [],
      cubesCount: generated.stats.cubeCount,
      definitive: true,
      summary: { cubes: expect.any(Array) },
    });
  });

  it('with hostile descriptions and meta, every type, composite keys and renamed members', async () => {
    const hostile = 'a: {x} {{ y }} {% z %} ${ld.attr.id} {CUBE}.id "q" \'s\' # h \\ end\\\r\n\t\u2028 😀';
    const typed = [
      'bigint',
      'numeric(38,2)',
      'VARCHAR(10)',
      'timestamp with time zone',
      'date',
      'bool',
      'geography',
    ];
    const generated = generateCubeFiles(
      manifest([
        modelNode('orders', {
          description: hostile,
          columns: Object.fromEntries(
            [...typed, 'uuid'].map((t, i) => [
              `c${i}`,
              {
                name: `c${i}`,
                data_type: t,
                description: hostile,
                meta: { note: hostile, list: [1, null, hostile] },
              },
            ]),
          ),
          constraints: [{ type: 'primary_key', columns: ['c0', 'c2'] }],
        }),
        modelNode('counts', { columns: { count: { name: 'count', data_type: 'int' } } }),
        modelNode('my-model', { relation_name: null }),
      ]),
    );
    expect(generated.files.map((f) => f.path)).toEqual([
      'model/cubes/counts.yml',
      'model/cubes/my_model.yml',
      'model/cubes/orders.yml',
    ]);
    await expect(compile(generated)).resolves.toEqual({
      valid: true,
      errors: [],
      cubesCount: 3,
      definitive: true,
      summary: { cubes: expect.any(Array) },
    });
  });

  it('hands Cube back every string exactly as the manifest had it', async () => {
    // ModelCompiler reports validity and counts only; this reads what Cube's compiler made of the
    // strings, in this process (the files are ours, not untrusted models).
    const strings = [
      'plain',
      'a: {x} {{ y }} {% z %} ${ld.attr.id} {CUBE}.id',
      'quotes "double" \'single\' f"{x}"',
      'back\\slash, end\\',
      'crlf\r\nlf\ncr\rtab\t',
      '\u0000\u0007\u007f\u0085\u2028\u2029\ufeff 😀 é',
      '\\x41 is not an escape here',
    ];
    const generated = generateCubeFiles(
      manifest([
        modelNode('orders', {
          description: strings.join(' | '),
          columns: Object.fromEntries(
            strings.map((d, i) => [
              `c${i}`,
              { name: `c${i}`, data_type: 'text', description: d, meta: { d } },
            ]),
          ),
        }),
      ]),
    );
    const noJinja = () => {
      throw new Error('Jinja is not expected here');
    };
    const options = {
      nativeInstance: {
        newJinjaEngine: () => ({ loadTemplate: noJinja, renderTemplate: noJinja }),
        loadPythonContext: noJinja,
      } as unknown as PrepareCompilerOptions['nativeInstance'],
      compileContext: { securityContext: {} },
      omitErrors: true,
      errorReport: { logger: () => undefined },
    };
    const files = generated.files.map((f) => ({
      fileName: f.path.slice('model/'.length),
      content: f.content,
    }));
    const compilers = prepareCompiler(
      { localPath: () => process.cwd(), dataSchemaFiles: () => Promise.resolve(files) },
      options,
    );
    await compilers.compiler.compile();
    const [cube] = compilers.metaTransformer.cubes.map(
      (c: {
        config: { description?: string; dimensions: { description?: string; meta?: { d: string } }[] };
      }) => c.config,
    );
    expect(cube.description).toBe(strings.join(' | '));
    expect(cube.dimensions.map((d) => d.description)).toEqual(strings);
    expect(cube.dimensions.map((d) => d.meta?.d)).toEqual(strings);
  });

  // 100 models here (500 convert in the unit test; the bench compiles 500 cubes).
  it('100 models', async () => {
    const nodes = Array.from({ length: 100 }, (_, i) =>
      modelNode(`model_${i}`, {
        description: `Model ${i}`,
        columns: Object.fromEntries(
          ['id', 'name', 'amount', 'created_at'].map((c, j) => [
            c,
            {
              name: c,
              data_type: ['bigint', 'text', 'numeric', 'timestamp'][j],
              description: `${c} of ${i}`,
            },
          ]),
        ),
        constraints: [{ type: 'primary_key', columns: ['id'] }],
      }),
    );
    const generated = generateCubeFiles(manifest(nodes));
    await expect(compile(generated)).resolves.toEqual({
      valid: true,
      errors: [],
      cubesCount: 100,
      definitive: true,
      summary: { cubes: expect.any(Array) },
    });
  }, 180_000);
});
