import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import path from 'node:path';
import { AppConfig } from '../../../core/config/app-config.js';
import { errorsOf } from '../../../core/errors/api-error.js';
import {
  NODE_VERSION,
  SANDBOX_DIR,
  appBinds,
  packageClosureBinds,
  sandboxAppPath,
} from '../../../core/sandbox/sandbox-command.js';
import {
  SandboxError,
  SandboxPool,
  endedHow,
  type JobOutcome,
  type SandboxStats,
} from '../../../core/sandbox/sandbox-pool.js';
import type { ModelSummary } from '../model-summary.js';
import type { ChildFile, ChildInput, ChildOutput } from './protocol.js';

/** A file of a branch's project; `fileName` is repo-relative POSIX, e.g. `model/cubes/orders.yml`. */
export interface ModelFile {
  fileName: string;
  content: string;
}

export interface CompileError {
  fileName?: string;
  message: string;
}

export interface CompileResult {
  valid: boolean;
  errors: CompileError[];
  /**
   * What Cube's /meta would list for this model: cubes and views together (/meta lists both in
   * its `cubes` array), less those /meta leaves out for having no visible member (`public: false`,
   * or every member hidden). 0 when the model is not valid, as /meta would not answer then.
   */
  cubesCount: number;
  /**
   * True when the verdict is the compiler's own: valid, the model's own compile errors, or the
   * files this service cannot compile (Jinja, Python). False when the sandbox stopped the compile
   * (time, memory, a crash, no or an invalid answer): the same model may fare otherwise next time.
   */
  definitive: boolean;
  /**
   * The compiled model's cubes and views as review compares them (issue 33), when the model is
   * valid; absent otherwise.
   */
  summary?: ModelSummary;
}

const compilerError = errorsOf('compiler_unavailable');

/**
 * Cube reads its model from `model/` (CUBEJS_SCHEMA_PATH's default); everything else in the
 * project, `cube.js` / `cube.py` configuration at the root included, is not model.
 */
export const MODEL_DIR = 'model/';

export const JINJA_UNSUPPORTED = "Jinja templates are not supported by this service's compiler";
export const PYTHON_UNSUPPORTED =
  "Python in the data model (globals.py, for Jinja templates) is not supported by this service's compiler";

/** Cube's own test for a YAML file it renders with Jinja first (DataSchemaCompiler). */
const JINJA_SYNTAX = /{%|%}|{{|}}/;

/** The most errors and the longest message passed on: the child's output is not trusted. */
const MAX_ERRORS = 500;
const MAX_MESSAGE = 8_000;
/** The most the child may write as its answer before it is killed. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
/** What V8 and the C++ runtime print when an allocation fails for good. */
const OUT_OF_MEMORY =
  /Reached heap limit|heap out of memory|allocation failed|bad_alloc|Cannot allocate memory/i;

/** The child in the build, relative to it, and the channel it imports. */
const CHILD = 'src/modules/data-model/compiler/compile-child.mjs';
const CHANNEL = 'src/core/sandbox/child-channel.mjs';

/**
 * The permission model's flag: `--permission` since Node 22.13 (Node 24 refuses the old name),
 * `--experimental-permission` before. Told by the version: `allowedNodeEnvironmentFlags` lists
 * only what NODE_OPTIONS may carry, which `--permission` is not.
 */
const { major, minor } = NODE_VERSION;
const PERMISSION_FLAG =
  major > 22 || (major === 22 && minor >= 13) ? '--permission' : '--experimental-permission';

/** The files to compile, named as Cube names them, and the errors of those this service cannot. */
export interface ModelSelection {
  compile: ChildFile[];
  errors: CompileError[];
}

/**
 * Which of a project's files Cube would read as model, and which of those need the native
 * Jinja/Python engine (absent here). `.js`, `.yml` and `.yaml` under `model/` compile; `.jinja`
 * files and YAML with Jinja syntax are reported unsupported, and so is `model/globals.py`, the one
 * Python file Cube loads (it serves Jinja). Other `.py` files under `model/` Cube ignores, so does
 * this; so it does every file outside `model/`.
 */
export function selectModelFiles(files: ModelFile[]): ModelSelection {
  const selection: ModelSelection = { compile: [], errors: [] };
  for (const file of files) {
    const fileName = path.posix.normalize(file.fileName.replace(/^\/+/, ''));
    if (!fileName.startsWith(MODEL_DIR)) continue;
    const inModel = fileName.slice(MODEL_DIR.length);
    const yaml = inModel.endsWith('.yml') || inModel.endsWith('.yaml');
    if (inModel.endsWith('.jinja') || (yaml && JINJA_SYNTAX.test(file.content))) {
      selection.errors.push({ fileName, message: JINJA_UNSUPPORTED });
    } else if (inModel === 'globals.py') {
      selection.errors.push({ fileName, message: PYTHON_UNSUPPORTED });
    } else if (yaml || inModel.endsWith('.js')) {
      selection.compile.push({ fileName: inModel, content: file.content });
    }
  }
  return selection;
}

/**
 * Compiles a deployment's data model with Cube's schema compiler, in warm single-use children
 * inside the sandbox (src/core/sandbox): a model is code, and it gets out of the compiler's `vm`.
 * Each child has loaded the compiler before it is handed a model, so a compiler that cannot be
 * loaded is known (503 `compiler_unavailable`) before any untrusted code runs; once a model is
 * sent, the only verdict is the child's answer with the job's nonce, and any other end is a failed
 * compile. The pool runs in every process that compiles (API processes, workers that run builds),
 * warm there, and is closed at shutdown.
 */
@Injectable()
export class ModelCompiler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ModelCompiler');
  private readonly pool: SandboxPool;
  private readonly warm: boolean;

  constructor(private readonly config: AppConfig) {
    const { compileTimeoutMs, compileMemoryMb, compilePoolSize } = config.dataModel;
    const { role, queue } = config;
    // Warm where compiles happen: API processes (validate; builds when jobs run there) and workers
    // that run builds. Elsewhere (the CLI) a compile, if any, starts its own child.
    this.warm = role === 'api' || (role === 'worker' && queue.workerQueues.includes('builds'));
    const fullWarmUp = this.warm && compilePoolSize > 0 && config.env === 'production';
    // A child kept warm in production prepares for a job to come (seconds of CPU): two transpiler
    // threads (each has a heap of its own: two fit from 512 MB up) and the full warm-up. One
    // started for a waiting job, or outside production, has one thread and only proves the
    // compiler works.
    const transpilerThreads = fullWarmUp && compileMemoryMb >= 512 ? 2 : 1;
    this.pool = new SandboxPool({
      label: 'model compiler',
      prepare: () => ({
        // The compiler's dependency closure, the child and the channel: nothing else of the host.
        binds: [
          ...appBinds([CHILD, CHANNEL], 'The model compiler'),
          ...packageClosureBinds('@cubejs-backend/schema-compiler', import.meta.url),
        ],
        nodeArgs: [
          `--max-old-space-size=${compileMemoryMb}`,
          // A second layer inside the sandbox: reads of the sandbox only; no child processes,
          // addons or writes. The compiler transpiles in a worker thread, under the same rules.
          PERMISSION_FLAG,
          `--allow-fs-read=${SANDBOX_DIR}${path.posix.sep}`,
          '--allow-worker',
          // The permission model's warnings would fill the stderr we keep.
          '--no-warnings',
          sandboxAppPath(CHILD),
          ...(fullWarmUp ? ['--warm-up=full'] : []),
          `--transpiler-threads=${transpilerThreads}`,
        ],
        isolates: 1 + transpilerThreads,
      }),
      poolSize: this.warm ? compilePoolSize : 0,
      timeoutMs: compileTimeoutMs,
      memoryMb: compileMemoryMb,
      maxAnswerBytes: MAX_ANSWER_BYTES,
      // A compile takes the CPU it finds: its replacement warms up once it is done.
      replaceAfterJob: true,
      bwrapPath: config.sandbox.bwrapPath,
      niceness: config.sandbox.niceness,
      logger: this.logger,
    });
  }

  onApplicationBootstrap(): void {
    // Never rejects: a sandbox that cannot be built says so through available() (and the log).
    if (this.warm && this.config.dataModel.compilePoolSize > 0) void this.pool.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool.close();
  }

  stats(): SandboxStats {
    return this.pool.stats();
  }

  /** Resolves once the warm children are ready (tests, benchmarks). */
  whenWarm(timeoutMs?: number): Promise<void> {
    return this.pool.whenWarm(timeoutMs);
  }

  /**
   * `spareWarm`: the caller's account has more compiles waiting (it floods): this compile starts a
   * child of its own rather than take the last warm one, which stays for another account.
   */
  async compile(files: ModelFile[], options: { spareWarm?: boolean } = {}): Promise<CompileResult> {
    const selection = selectModelFiles(files);
    if (selection.compile.length === 0) {
      const valid = selection.errors.length === 0;
      return {
        valid,
        errors: selection.errors,
        cubesCount: 0,
        definitive: true,
        ...(valid ? { summary: { cubes: [] } } : {}),
      };
    }
    const output = await this.runChild(selection.compile, options.spareWarm ?? false);
    if ('failure' in output) {
      return {
        valid: false,
        errors: [...selection.errors, { message: output.failure }],
        cubesCount: 0,
        definitive: false,
      };
    }
    // Back to repo-relative names; a name that is not one of the model's files is not passed on.
    const sent = new Set(selection.compile.map((f) => f.fileName));
    const errors = [
      ...selection.errors,
      ...output.errors.map(({ fileName, message }): CompileError =>
        fileName !== undefined && sent.has(fileName)
          ? { fileName: MODEL_DIR + fileName, message }
          : { message },
      ),
    ];
    const valid = errors.length === 0;
    return {
      valid,
      errors,
      cubesCount: valid ? output.cubesCount : 0,
      definitive: true,
      ...(valid && output.summary ? { summary: output.summary } : {}),
    };
  }

  /** Runs one compile in a warm child; its answer, or why there is none. */
  private async runChild(files: ChildFile[], spareWarm: boolean): Promise<ChildOutput | { failure: string }> {
    await this.pool.start();
    const available = this.pool.available();
    if (available !== true) throw compilerError('compiler_unavailable', available);
    const input: ChildInput = { files };
    let outcome: JobOutcome;
    try {
      outcome = await this.pool.run(Buffer.from(JSON.stringify(input)), { spareWarm });
    } catch (error) {
      // Before the model was sent: no sandbox, no child ready in time, or shutting down.
      if (error instanceof SandboxError) throw compilerError('compiler_unavailable', error.message);
      throw error;
    }
    switch (outcome.kind) {
      case 'answer':
        return parseOutput(outcome.payload) ?? { failure: 'The compiler gave an answer that is not valid' };
      case 'invalid':
        return { failure: 'The compiler gave an answer that is not valid' };
      case 'too_large':
        return { failure: 'The compiler produced more output than this service accepts' };
      case 'timeout':
        return { failure: `Compilation timed out after ${this.pool.timeoutMs} ms` };
      case 'ended': {
        if (OUT_OF_MEMORY.test(outcome.stderr)) {
          return { failure: `Compilation ran out of memory (limit ${this.pool.memoryMb} MB)` };
        }
        const how = endedHow(outcome.code, outcome.signal);
        this.logger.warn(
          `A model compiler process (pid ${outcome.pid}) ended without an answer (${how}): ${outcome.stderr.trim().slice(-1000)}`,
        );
        return { failure: `The compiler stopped unexpectedly (${how})` };
      }
    }
  }
}

/** The child's answer, checked: it comes from a process that ran untrusted code. */
function parseOutput(value: unknown): ChildOutput | null {
  if (typeof value !== 'object' || value === null) return null;
  const { errors, cubesCount, summary } = value as Record<string, unknown>;
  if (!Array.isArray(errors) || !Number.isSafeInteger(cubesCount) || (cubesCount as number) < 0) return null;
  // A model without errors comes with its summary (the diff would read a missing one as empty).
  if (summary === undefined ? errors.length === 0 : !isSummary(summary)) return null;
  const checked: ChildOutput['errors'] = [];
  for (const e of errors.slice(0, MAX_ERRORS) as unknown[]) {
    const { fileName, message } = (typeof e === 'object' && e !== null ? e : {}) as Record<string, unknown>;
    if (typeof message !== 'string') return null;
    const text = message.slice(0, MAX_MESSAGE);
    checked.push(typeof fileName === 'string' ? { fileName, message: text } : { message: text });
  }
  if (errors.length > MAX_ERRORS)
    checked.push({ message: `... and ${errors.length - MAX_ERRORS} more errors` });
  return {
    errors: checked,
    cubesCount: cubesCount as number,
    ...(summary !== undefined ? { summary: summary as ModelSummary } : {}),
  };
}

/** The most cubes, and members of a cube, a summary may hold (the child keeps to the same). */
const MAX_SUMMARY_CUBES = 5_000;
const MAX_SUMMARY_MEMBERS = 5_000;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isNameList = (v: unknown, max: number, item: (x: Record<string, unknown>) => boolean): boolean =>
  Array.isArray(v) && v.length <= max && v.every((x) => isObject(x) && typeof x.name === 'string' && item(x));
const stringOrNull = (v: unknown): boolean => v === null || typeof v === 'string';

/**
 * Whether the child's summary has the shape of a {@link ModelSummary}: it is JSON already (the
 * answer was parsed), and within the answer's size; only its structure is checked here.
 */
function isSummary(value: unknown): boolean {
  if (!isObject(value)) return false;
  return isNameList(
    value.cubes,
    MAX_SUMMARY_CUBES,
    (c) =>
      (c.kind === 'cube' || c.kind === 'view') &&
      stringOrNull(c.fileName) &&
      typeof c.public === 'boolean' &&
      isObject(c.attributes) &&
      (c.accessPolicy === null || Array.isArray(c.accessPolicy)) &&
      isNameList(
        c.members,
        MAX_SUMMARY_MEMBERS,
        (m) =>
          (m.kind === 'measure' || m.kind === 'dimension' || m.kind === 'segment') &&
          stringOrNull(m.type) &&
          typeof m.public === 'boolean' &&
          isObject(m.attributes),
      ) &&
      isNameList(c.joins, MAX_SUMMARY_MEMBERS, (j) => stringOrNull(j.relationship) && stringOrNull(j.sql)) &&
      isNameList(c.preAggregations, MAX_SUMMARY_MEMBERS, (p) => isObject(p.attributes)),
  );
}
