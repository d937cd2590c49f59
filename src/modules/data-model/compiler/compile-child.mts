/**
 * The compile child: one process per compile, kept warm by ModelCompiler (model-compiler.ts)
 * inside the sandbox (src/core/sandbox: bubblewrap, seccomp, rlimits). It loads Cube's schema
 * compiler and compiles a small model once, says it is ready, reads one {@link ChildInput},
 * compiles it and answers a {@link ChildOutput}, through the sandbox's channel, and exits.
 *
 * It runs untrusted code, and the compiler does not contain it: a dimension link's `url` is
 * rebuilt by the compiler with a `new Function` of this realm (CubeSymbols.buildLinkSqlWithParams,
 * reached from a JS model or a YAML f-string), so a model can hold `process`. The sandbox around
 * this process is the boundary (no network, no host files, no other process, a memory cap, a kill
 * timer). Inside it: the Node permission model (reads of the sandbox only; no child processes,
 * addons or writes), a heap cap and the function constructors closed (below), as further layers.
 *
 * A `.mts` file so that its build is a `.mjs`: the sandbox holds no package.json to say that a
 * `.js` is a module. It imports no value from the project but the channel (an `.mjs` too).
 */
import childProcess, { type SpawnSyncReturns } from 'node:child_process';
import { createRequire } from 'node:module';
import type { PrepareCompilerOptions } from '@cubejs-backend/schema-compiler';
import { openChannel } from '../../../core/sandbox/child-channel.mjs';
import type {
  MemberKind,
  ModelSummary,
  SummaryCube,
  SummaryJoin,
  SummaryMember,
  SummaryPreAggregation,
} from '../model-summary.js';
import type { ChildFile, ChildInput, ChildOutput } from './protocol.js';

// First: the channel takes its references before anything else runs.
const channel = openChannel();

type SchemaCompiler = typeof import('@cubejs-backend/schema-compiler');
type ChildError = ChildOutput['errors'][number];

/** The parts of the compiler's ErrorReporter used here (`file` is protected in its types). */
interface Reporter {
  file: ChildFile | null;
  inFile(file: ChildFile): void;
  exitFile(): void;
  getErrors(): { message: string; fileName?: string }[];
}

/** The private parts of DataSchemaCompiler this child relies on (pinned version: see the tests). */
interface CompilerInternals {
  errorsReporter?: Reporter;
  compileJsFile?: (file: ChildFile, reporter: Reporter, options?: unknown) => void;
}

/** The shape of /meta's cube entries, as far as counting them goes. */
interface MetaMember {
  isVisible?: boolean;
}
interface MetaCube {
  config: { measures?: MetaMember[]; dimensions?: MetaMember[]; segments?: MetaMember[] };
}

const JINJA_UNSUPPORTED = "Jinja templates are not supported by this service's compiler";

/**
 * Without the native extension (its binary is a GitHub download we do not allow), every compile
 * still asks the native Jinja engine for an instance; this stub answers, and fails only if a
 * template is actually rendered. ModelCompiler never sends Jinja or globals.py, so it should not.
 */
const nativeInstance = {
  newJinjaEngine: () => ({
    loadTemplate: () => {
      throw new Error(JINJA_UNSUPPORTED);
    },
    renderTemplate: () => {
      throw new Error(JINJA_UNSUPPORTED);
    },
  }),
  loadPythonContext: () => {
    throw new Error("Python (globals.py) is not supported by this service's compiler");
  },
};

/**
 * Closes the one well-known way out of the compiler's `vm`: the host's function constructors,
 * reached through any host object (`this.constructor.constructor`, `cube.constructor`, an async
 * method's constructor). The compiler itself calls `new Function` directly, which stays open; a
 * process-wide `--disallow-code-generation-from-strings` would break its views. Called after the
 * compiler is loaded, before any model code runs.
 */
function closeFunctionConstructors(): void {
  const refuse = (): never => {
    throw new EvalError('Code generation is not allowed in a data model');
  };
  const samples = [function () {}, async function () {}, function* () {}, async function* () {}];
  for (const sample of samples) {
    Object.defineProperty(Object.getPrototypeOf(sample), 'constructor', {
      value: refuse,
      writable: false,
      configurable: false,
    });
  }
}

function messageOf(error: unknown): string {
  // Not `instanceof Error`: an error thrown by a model comes from the vm's realm, with its own Error.
  const message = (error as { message?: unknown } | null)?.message;
  const text = typeof message === 'string' ? message : String(error);
  // Code frames are coloured when the compiler thinks it writes to a terminal.
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*m/g, '').trim();
}

/** Cube's own wording for a JS syntax error (DataSchemaCompiler.transpileJsFile). */
function syntaxErrorMessage(error: unknown, content: string): string {
  const loc = (error as { loc?: { line?: number; column?: number } }).loc;
  const line = content.split('\n')[(loc?.line ?? 1) - 1] ?? '';
  return `Syntax error during parsing: ${messageOf(error)}:\n${line}\n${' '.repeat(loc?.column ?? 0)}^`;
}

/**
 * A YAML or JS file that does not parse makes the compiler throw one error without a file name
 * (YAML) or report one without it (JS), and a YAML error aborts the whole compile. Parsing each
 * file first with the parsers the compiler uses names the file, and the other files still compile.
 */
function preParse(
  files: ChildFile[],
  compilerRequire: NodeJS.Require,
): { parsed: ChildFile[]; errors: ChildError[] } {
  const yaml = compilerRequire('js-yaml') as { load(text: string): unknown };
  const babel = compilerRequire('@babel/parser') as { parse(code: string, options: object): unknown };
  const parsed: ChildFile[] = [];
  const errors: ChildError[] = [];
  for (const file of files) {
    try {
      if (file.fileName.endsWith('.js')) {
        // The options of the compiler's own transpiler (transpilers/transpiler_worker.js).
        babel.parse(file.content, {
          sourceFilename: file.fileName,
          sourceType: 'module',
          plugins: ['objectRestSpread'],
        });
      } else {
        yaml.load(file.content);
      }
      parsed.push(file);
    } catch (error) {
      const message = file.fileName.endsWith('.js')
        ? syntaxErrorMessage(error, file.content)
        : messageOf(error);
      errors.push({ fileName: file.fileName, message });
    }
  }
  return { parsed, errors };
}

/**
 * Errors the compiler reports while a file's code runs (`require('fs')`, a throw at the top level)
 * carry no file name: report them under the file being run. compileJsFile also runs required
 * local files, so the previous file is restored afterwards.
 */
function attributeRunErrors(compiler: CompilerInternals): void {
  const compileJsFile = compiler.compileJsFile?.bind(compiler);
  if (!compileJsFile) return;
  compiler.compileJsFile = (file, reporter, options) => {
    const outer = reporter.file;
    reporter.inFile(file);
    try {
      compileJsFile(file, reporter, options);
    } finally {
      if (outer) reporter.inFile(outer);
      else reporter.exitFile();
    }
  };
}

/**
 * What /meta would list: cubes and views alike (they share its `cubes` array), less those with no
 * visible member, which /meta leaves out (`public: false`, or every member hidden).
 */
function countListed(cubes: MetaCube[]): number {
  const visible = (members: MetaMember[] | undefined) => (members ?? []).some((m) => m.isVisible);
  return cubes.filter(({ config: c }) => visible(c.measures) || visible(c.dimensions) || visible(c.segments))
    .length;
}

// --- The summary (issue 33: the member diff, the content impact) -------------------------------------

/** Bounds of the summary: an answer of any model stays small (the host checks them again). */
const SUMMARY = {
  cubes: 5_000,
  membersPerCube: 5_000,
  itemsPerCube: 1_000,
  text: 4_000,
  arrayItems: 200,
  objectKeys: 100,
  depth: 6,
} as const;

/** A definition as the compiler evaluated it: an object of anything (functions included). */
type Definition = Record<string, unknown>;

const byName = <T extends { name: string }>(a: T, b: T): number =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

function clip(text: string): string {
  return text.length > SUMMARY.text ? `${text.slice(0, SUMMARY.text)}…` : text;
}

/**
 * A value as JSON a reader can compare: a function by its source text (the compiler keeps `sql`,
 * `sql_table`, drill members... as functions), objects with their keys sorted, bounded in depth,
 * length and size; undefined and symbols dropped.
 */
function plain(value: unknown, depth = 0, seen = new Set<unknown>()): unknown {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') {
    return typeof value === 'string' ? clip(value) : value;
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function') return clip(Function.prototype.toString.call(value));
  if (typeof value !== 'object' || depth >= SUMMARY.depth || seen.has(value)) return undefined;
  seen.add(value);
  try {
    if (Array.isArray(value)) {
      return value
        .slice(0, SUMMARY.arrayItems)
        .map((v) => plain(v, depth + 1, seen))
        .map((v) => (v === undefined ? null : v));
    }
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort().slice(0, SUMMARY.objectKeys)) {
      const v = plain((value as Definition)[key], depth + 1, seen);
      if (v !== undefined) out[key] = v;
    }
    return out;
  } finally {
    seen.delete(value);
  }
}

/** The attributes of a definition, one by one, less those named in `skip`. */
function attributesOf(def: Definition, skip: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(def).sort().slice(0, SUMMARY.objectKeys)) {
    if (skip.has(key)) continue;
    const v = plain(def[key], 1);
    if (v !== undefined) out[key] = v;
  }
  return out;
}

/** `public: false` (or the older `visible`/`shown: false`) hides a cube, view or member. */
function isPublic(def: Definition): boolean {
  for (const key of ['public', 'visible', 'shown']) {
    if (def[key] !== undefined && def[key] !== null) return def[key] !== false;
  }
  return true;
}

/** Member attributes that are the compiler's bookkeeping or have a field of their own. */
const MEMBER_SKIP = new Set([
  'type',
  'aggType',
  'public',
  'visible',
  'shown',
  'ownedByCube',
  'synthetic',
  'name',
]);

/** Cube attributes compared one by one; members, joins and the rest are summarised apart. */
const CUBE_ATTRIBUTES = [
  'sql',
  'sqlTable',
  'sqlAlias',
  'title',
  'description',
  'dataSource',
  'extends',
  'refreshKey',
  'meta',
  'calendar',
] as const;

const KINDS: Array<[MemberKind, 'measures' | 'dimensions' | 'segments']> = [
  ['measure', 'measures'],
  ['dimension', 'dimensions'],
  ['segment', 'segments'],
];

function membersOf(cube: Definition, cubePublic: boolean): SummaryMember[] {
  const members: SummaryMember[] = [];
  for (const [kind, field] of KINDS) {
    const defs = (cube[field] ?? {}) as Record<string, Definition>;
    for (const name of Object.keys(defs).sort()) {
      const def = defs[name];
      // Links' generated `<dim>___link_<n>_url` dimensions: the link is an attribute of its dimension.
      if (!def || typeof def !== 'object' || def.synthetic) continue;
      // A view's measure has the data type (`number`) as `type`, the cube's (`sum`) as `aggType`.
      const raw = def.aggType ?? def.type;
      const type = kind !== 'segment' && typeof raw === 'string' && raw !== '' ? raw : null;
      members.push({
        name,
        kind,
        type,
        public: cubePublic && isPublic(def),
        attributes: attributesOf(def, MEMBER_SKIP),
      });
      if (members.length >= SUMMARY.membersPerCube) return members;
    }
  }
  return members;
}

/** A value as one text (a join's `sql`): a string as it is, anything else as JSON; null for none. */
function asText(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' ? v : clip(JSON.stringify(v));
}

function joinsOf(cube: Definition): SummaryJoin[] {
  // Evaluated joins are a list of {name, sql, relationship} (relationships in the compiler's words).
  const raw = Array.isArray(cube.joins)
    ? (cube.joins as Definition[])
    : Object.entries((cube.joins ?? {}) as Record<string, Definition>).map(([name, j]): Definition => ({
        ...j,
        name,
      }));
  return raw
    .filter((j) => j && typeof j.name === 'string')
    .slice(0, SUMMARY.itemsPerCube)
    .map((j) => ({
      name: j.name as string,
      relationship: typeof j.relationship === 'string' ? j.relationship : null,
      sql: asText(plain(j.sql, 1)),
    }))
    .sort(byName);
}

function preAggregationsOf(cube: Definition): SummaryPreAggregation[] {
  const defs = (cube.preAggregations ?? {}) as Record<string, Definition>;
  return Object.keys(defs)
    .sort()
    .slice(0, SUMMARY.itemsPerCube)
    .map((name) => ({ name, attributes: attributesOf(defs[name] ?? {}, new Set(['name'])) }));
}

/** A filter of a row-level policy, with the member it names as a path. */
function policyFilter(filter: Definition): unknown {
  const { member, memberReference, ...rest } = filter;
  const out = plain(rest, 2) as Record<string, unknown>;
  const path = memberReference ?? member;
  if (path !== undefined) out.member = plain(path, 2);
  for (const key of ['and', 'or'] as const) {
    if (Array.isArray(filter[key])) out[key] = (filter[key] as Definition[]).map(policyFilter);
  }
  return out;
}

/**
 * The access policy as the compiler evaluated it: member levels as member paths (`*` expanded),
 * sorted; row-level filters with their members; conditions and the rest as JSON.
 */
function accessPolicyOf(cube: Definition): unknown[] | null {
  if (!Array.isArray(cube.accessPolicy)) return null;
  return (cube.accessPolicy as Definition[]).slice(0, SUMMARY.arrayItems).map((policy) => {
    const { memberLevel, rowLevel, memberMasking, ...rest } = policy ?? {};
    const out = plain(rest, 1) as Record<string, unknown>;
    const levels = (level: unknown) => {
      const l = (level ?? {}) as Definition;
      const list = (v: unknown) => (Array.isArray(v) ? v.map(String).sort() : []);
      return {
        includes: list(l.includesMembers ?? l.includes),
        excludes: list(l.excludesMembers ?? l.excludes),
      };
    };
    if (memberLevel) out.memberLevel = levels(memberLevel);
    if (memberMasking)
      out.memberMasking = { ...(plain(memberMasking, 1) as object), ...levels(memberMasking) };
    if (rowLevel) {
      const r = rowLevel as Definition;
      out.rowLevel = {
        filters: Array.isArray(r.filters) ? (r.filters as Definition[]).map(policyFilter) : [],
        allowAll: r.allowAll === true,
      };
    }
    return out;
  });
}

/** The compiled model's cubes and views, as review compares them (see model-summary.ts). */
function summarise(evaluated: Record<string, Definition>): ModelSummary {
  const cubes: SummaryCube[] = [];
  for (const name of Object.keys(evaluated).sort().slice(0, SUMMARY.cubes)) {
    const cube = evaluated[name];
    const cubePublic = isPublic(cube);
    const attributes: Record<string, unknown> = {};
    for (const key of CUBE_ATTRIBUTES) {
      const v = plain(cube[key], 1);
      if (v !== undefined) attributes[key] = v;
    }
    cubes.push({
      name,
      kind: cube.isView ? 'view' : 'cube',
      fileName: typeof cube.fileName === 'string' ? cube.fileName : null,
      public: cubePublic,
      attributes,
      members: membersOf(cube, cubePublic),
      joins: joinsOf(cube),
      preAggregations: preAggregationsOf(cube),
      accessPolicy: accessPolicyOf(cube),
    });
  }
  return { cubes };
}

/**
 * Compiles `files`. `untrusted`: the files are a job's, so the function constructors are closed
 * first (once per process: the warm-up compile runs our own files, before).
 */
async function compile(
  files: ChildFile[],
  cube: SchemaCompiler,
  compilerRequire: NodeJS.Require,
  untrusted: boolean,
): Promise<ChildOutput> {
  const { parsed, errors } = preParse(files, compilerRequire);
  const repository = {
    localPath: () => process.cwd(),
    dataSchemaFiles: () => Promise.resolve(parsed),
  };
  const options = {
    // A structural stub of the NativeInstance class (which has private fields).
    nativeInstance: nativeInstance as unknown as PrepareCompilerOptions['nativeInstance'],
    // As a request with an empty security context: COMPILE_CONTEXT.securityContext.x is undefined.
    compileContext: { securityContext: {} },
    // Collect the reporter's errors instead of one CompileError that joins them into a string.
    omitErrors: true,
    errorReport: { logger: () => undefined },
  };
  const compilers = cube.prepareCompiler(repository, options);
  const internals = compilers.compiler as unknown as CompilerInternals;
  attributeRunErrors(internals);
  if (untrusted) closeFunctionConstructors();

  const thrown: ChildError[] = [];
  try {
    await compilers.compiler.compile();
  } catch (error) {
    thrown.push({ message: messageOf(error) });
  }

  // Errors found while checking a cube or view are prefixed "<name> cube: ": name its file.
  const fileOfCube = new Map(compilers.cubeEvaluator.cubeList.map((c) => [c.name, c.fileName as string]));
  const named = (e: { message: string; fileName?: string }): ChildError => {
    const message = messageOf(e.message);
    const fileName =
      e.fileName ?? fileOfCube.get(/^([A-Za-z_$][\w$]*) cube(?::| ->)/.exec(message)?.[1] ?? '');
    return fileName ? { fileName, message } : { message };
  };
  const all = [...errors, ...(internals.errorsReporter?.getErrors() ?? []), ...thrown].map(named);
  if (all.length > 0) return { errors: all, cubesCount: 0 };
  const evaluated = (compilers.cubeEvaluator as unknown as { evaluatedCubes: Record<string, Definition> })
    .evaluatedCubes;
  let summary: ModelSummary;
  try {
    summary = summarise(evaluated);
  } catch (error) {
    // Only a model that fights being read gets here (a getter that throws): it is not reviewable.
    return {
      errors: [{ message: `The compiled model could not be read: ${messageOf(error)}` }],
      cubesCount: 0,
    };
  }
  return { errors: all, cubesCount: countListed(compilers.metaTransformer.cubes), summary };
}

function loadCompiler(): { cube: SchemaCompiler; compilerRequire: NodeJS.Require } {
  // @cubejs-backend/shared probes the C library by spawning getconf/ldd when the compiler loads;
  // the permission model refuses child processes (on purpose). The answer only matters to Jinja.
  const noSpawn = (): SpawnSyncReturns<string> => ({
    pid: 0,
    output: [],
    stdout: '',
    stderr: '',
    status: 0,
    signal: null,
  });
  Object.assign(childProcess, { spawnSync: noSpawn });
  process.env.CUBEJS_TRANSPILATION_WORKER_THREADS_COUNT = String(TRANSPILER_THREADS);
  // Found from here, as the sandbox binds it: /sandbox/node_modules/@cubejs-backend/schema-compiler.
  const entry = createRequire(import.meta.url).resolve('@cubejs-backend/schema-compiler');
  const compilerRequire = createRequire(entry);
  keepTranspilerThreads(compilerRequire);
  return { cube: createRequire(import.meta.url)(entry) as SchemaCompiler, compilerRequire };
}

/**
 * Transpiler threads (YAML and JS to the compiler's JS, in `workerpool` threads) for the child's
 * compiles, from `--transpiler-threads=<n>` (ModelCompiler gives 2 from a 512 MB cap up, else 1):
 * on 2 cores a 50-cube model compiled in about 1.0 s with two warm threads against 1.5 s with
 * one, and each thread's heap costs about 70 MB.
 */
const TRANSPILER_THREADS = Math.max(
  1,
  Number(
    /^--transpiler-threads=(\d+)$/.exec(
      process.argv.find((a) => a.startsWith('--transpiler-threads=')) ?? '',
    )?.[1] ?? 1,
  ),
);

interface WorkerPool {
  terminate(): Promise<unknown>;
}

/**
 * The compiler makes a pool of transpiler threads for each compile and ends it after, so every
 * compile would pay for starting threads and loading Babel and its parsers in them (a third of a
 * 50-cube compile). This child compiles twice (the warm-up, then the job), so it keeps one pool,
 * started with its threads at once, and warmed by the warm-up compile.
 */
function keepTranspilerThreads(compilerRequire: NodeJS.Require): void {
  const workerpool = compilerRequire('workerpool') as {
    pool: (script: string, options?: Record<string, unknown>) => WorkerPool;
  };
  const make = workerpool.pool.bind(workerpool);
  let kept: WorkerPool | null = null;
  workerpool.pool = (script, options) => {
    if (!kept) {
      kept = make(script, { ...options, minWorkers: TRANSPILER_THREADS, maxWorkers: TRANSPILER_THREADS });
      // The threads end with this process, once it has answered.
      kept.terminate = () => Promise.resolve();
    }
    return kept;
  };
}

/**
 * Compiled at warm-up, before the child says it is ready: it proves the compiler works before any
 * job's code runs, loads what a compile loads lazily (parsers, transpiler threads) and gives V8
 * the compiler's hot code to optimise, off the job's time. Shaped like a real model, YAML and JS:
 * members of each kind, templated SQL, joins, segments, a pre-aggregation and views over join
 * paths (a view per ten cubes).
 */
function warmUpModel(CUBES: number): ChildFile[] {
  const yamlCube = (i: number): string =>
    `cubes:
  - name: warm_${i}
    sql_table: warm.table_${i}
    description: Warm-up cube ${i}
${i > 0 ? `    joins:\n      - name: warm_${i - 1}\n        sql: "{CUBE}.parent_id = {warm_${i - 1}}.id"\n        relationship: many_to_one\n` : ''}    dimensions:
      - name: id
        sql: id
        type: number
        primary_key: true
      - name: status
        sql: "{CUBE}.status"
        type: string
      - name: region
        sql: "UPPER({CUBE}.region)"
        type: string
        title: Region
      - name: amount_band
        sql: "CASE WHEN {CUBE}.amount > 100 THEN 'high' ELSE 'low' END"
        type: string
      - name: created_at
        sql: created_at
        type: time
    measures:
      - name: count
        type: count
      - name: total
        sql: amount
        type: sum
        format: currency
      - name: average
        sql: amount
        type: avg
      - name: buyers
        sql: buyer_id
        type: count_distinct
      - name: paid
        sql: amount
        type: sum
        filters:
          - sql: "{CUBE}.status = 'paid'"
    segments:
      - name: recent
        sql: "{CUBE}.created_at > now() - interval '7 days'"
    pre_aggregations:
      - name: daily
        measures: [count, total]
        dimensions: [status]
        time_dimension: created_at
        granularity: day
`;
  const jsCube = (i: number): string =>
    `cube(\`warm_js_${i}\`, {
  sql: \`SELECT * FROM warm.js_${i} WHERE \${FILTER_PARAMS.warm_js_${i}.created_at.filter('created_at')}\`,
  joins: { warm_${i}: { relationship: 'many_to_one', sql: \`\${CUBE}.warm_id = \${warm_${i}.id}\` } },
  measures: { count: { type: 'count' }, total: { sql: \`\${CUBE}.amount\`, type: 'sum' } },
  dimensions: {
    id: { sql: 'id', type: 'number', primaryKey: true },
    label: { sql: \`\${CUBE}.label\`, type: 'string' },
    created_at: { sql: 'created_at', type: 'time' },
  },
});
`;
  const view = (v: number): string =>
    `views:
  - name: warm_view_${v}
    cubes:
      - join_path: warm_${v * 10 + 1}
        includes: [count, total, status, created_at]
      - join_path: warm_${v * 10 + 1}.warm_${v * 10}
        prefix: true
        includes: [count, region]
`;
  return [
    ...Array.from({ length: CUBES }, (_, i) => ({ fileName: `cubes/warm_${i}.yml`, content: yamlCube(i) })),
    ...Array.from({ length: Math.min(4, CUBES) }, (_, i) => ({
      fileName: `cubes/warm_js_${i}.js`,
      content: jsCube(i),
    })),
    ...Array.from({ length: Math.floor(CUBES / 10) }, (_, v) => ({
      fileName: `views/warm_view_${v}.yml`,
      content: view(v),
    })),
  ];
}

/**
 * `--warm-up=full` (a child kept warm for a job to come, in production): two compiles of 30
 * cubes, the second on optimised code, which the job then finds. Otherwise (a child started for a job that waits) one
 * compile of one cube, only to prove the compiler works.
 */
const FULL_WARM_UP = process.argv.includes('--warm-up=full');

async function main(): Promise<void> {
  let loaded: ReturnType<typeof loadCompiler>;
  try {
    loaded = loadCompiler();
  } catch (error) {
    // Before ready: the pool reports the compiler unavailable, with this reason, and sends no job.
    process.stderr.write(`cannot load the schema compiler: ${messageOf(error)}\n`);
    process.exit(1);
  }
  const { cube, compilerRequire } = loaded;
  const model = warmUpModel(FULL_WARM_UP ? 30 : 1);
  for (let round = 0; round < (FULL_WARM_UP ? 2 : 1); round++) {
    const warm = await compile(model, cube, compilerRequire, false);
    if (warm.errors.length > 0) {
      process.stderr.write(`the warm-up model does not compile: ${warm.errors[0].message}\n`);
      process.exit(1);
    }
  }
  channel.ready();
  const input = JSON.parse((await channel.job()).body.toString('utf8')) as ChildInput;
  channel.answer(await compile(input.files, cube, compilerRequire, true));
}

await main();
