import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { AppConfig } from '../../../core/config/app-config.js';
import { errorsOf } from '../../../core/http/api-error.js';
import {
  EXIT_COMPILER_MISSING,
  RESULT_FD,
  type ChildFile,
  type ChildInput,
  type ChildOutput,
} from './protocol.js';

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
/** The most the child may write as its result before it is killed, and the stderr kept for the log. */
const MAX_OUTPUT_BYTES = 16 * 1024 * 1024;
const STDERR_TAIL = 8_192;
/** What V8 prints when a heap reaches its cap, before it aborts the process. */
const OUT_OF_MEMORY = /Reached heap limit|heap out of memory/;

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
 * Where the compiled child script is. In a build it sits beside this module
 * (`dist/src/modules/data-model/compiler/compile-child.js`). Under Jest this module is the
 * TypeScript source, compiled in memory, with no child beside it: the child is then the one in the
 * build the test run uses, which the tests' global setup also runs (TEST_DIST_DIR, default
 * `dist`). Only that test-time branch reads the environment.
 */
function locateChildScript(): string {
  const here = fileURLToPath(import.meta.url);
  const beside = path.join(path.dirname(here), 'compile-child.js');
  if (here.endsWith('.js')) return beside;
  const root = path.resolve(path.dirname(here), '../../../..');
  const relative = path.relative(root, beside);
  return path.resolve(root, process.env.TEST_DIST_DIR ?? 'dist', relative);
}

/** The permission model's flag: `--permission` since Node 22.13, `--experimental-permission` on 20. */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission')
  ? '--permission'
  : '--experimental-permission';

/**
 * Compiles a deployment's data model with Cube's schema compiler, each compile in a short-lived
 * child process: a JS model is code, and it escapes the compiler's `vm`. The child gets no
 * environment (so no secret of the API), a heap cap, reads only its own directory and
 * node_modules, cannot start processes, and is killed when its time is up.
 */
@Injectable()
export class ModelCompiler implements OnModuleDestroy {
  private readonly logger = new Logger('ModelCompiler');
  private readonly childScript = locateChildScript();
  /** Children still running, killed when the application closes rather than left to their timers. */
  private readonly running = new Set<ChildProcess>();
  private readonly timeoutMs: number;
  private readonly memoryMb: number;

  constructor(config: AppConfig) {
    this.timeoutMs = config.dataModel.compileTimeoutMs;
    this.memoryMb = config.dataModel.compileMemoryMb;
  }

  onModuleDestroy(): void {
    for (const child of this.running) child.kill('SIGKILL');
  }

  async compile(files: ModelFile[]): Promise<CompileResult> {
    const selection = selectModelFiles(files);
    if (selection.compile.length === 0) {
      return { valid: selection.errors.length === 0, errors: selection.errors, cubesCount: 0 };
    }
    const output = await this.runChild(selection.compile);
    if ('failure' in output) {
      return { valid: false, errors: [...selection.errors, { message: output.failure }], cubesCount: 0 };
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
    return { valid: errors.length === 0, errors, cubesCount: errors.length === 0 ? output.cubesCount : 0 };
  }

  /** Runs one compile in a child; a result, or the reason the child gave none. */
  private runChild(files: ChildFile[]): Promise<ChildOutput | { failure: string }> {
    const { entry, nodeModules } = this.compilerLocation();
    if (!fs.existsSync(this.childScript)) {
      throw compilerError(
        'compiler_unavailable',
        `The model compiler is not built (${this.childScript} is missing)`,
      );
    }
    // Real paths: the permission model compares them, and node_modules may be a link.
    const childDir = fs.realpathSync(path.dirname(this.childScript));
    const args = [
      `--max-old-space-size=${this.memoryMb}`,
      PERMISSION_FLAG,
      `--allow-fs-read=${nodeModules}${path.sep}`,
      `--allow-fs-read=${childDir}${path.sep}`,
      // The compiler transpiles in worker threads; they are under the same permissions.
      '--allow-worker',
      // The permission model's experimental and security warnings would fill the stderr we keep.
      '--no-warnings',
      path.join(childDir, path.basename(this.childScript)),
    ];

    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, args, {
        cwd: childDir,
        env: {},
        stdio: ['pipe', 'ignore', 'pipe', 'pipe'],
      });
      this.running.add(child);
      let settled = false;
      let timedOut = false;
      let tooLarge = false;
      const result: Buffer[] = [];
      let resultBytes = 0;
      let stderr = '';
      let outOfMemory = false;

      const timer = setTimeout(() => {
        timedOut = true;
        child.kill('SIGKILL');
      }, this.timeoutMs);

      child.once('error', (error) => {
        // The child could not be started at all (ENOENT, EAGAIN, ENOMEM): nothing to compile with.
        clearTimeout(timer);
        this.running.delete(child);
        if (settled) return;
        settled = true;
        reject(
          compilerError('compiler_unavailable', `The model compiler could not be started: ${error.message}`),
        );
      });
      child.stdin?.on('error', () => undefined); // EPIPE when the child dies before reading it all
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
        outOfMemory ||= OUT_OF_MEMORY.test(stderr);
      });
      const resultPipe = child.stdio[RESULT_FD] as Readable | null;
      resultPipe?.on('data', (chunk: Buffer) => {
        resultBytes += chunk.length;
        if (resultBytes > MAX_OUTPUT_BYTES) {
          tooLarge = true;
          child.kill('SIGKILL');
        } else {
          result.push(chunk);
        }
      });

      child.once('close', (code, signal) => {
        clearTimeout(timer);
        this.running.delete(child);
        if (settled) return;
        settled = true;
        if (timedOut) return resolve({ failure: `Compilation timed out after ${this.timeoutMs} ms` });
        if (tooLarge)
          return resolve({ failure: 'The compiler produced more output than this service accepts' });
        if (code === EXIT_COMPILER_MISSING) {
          this.logger.error(`model compiler child could not load the compiler: ${stderr.trim()}`);
          return reject(compilerError('compiler_unavailable', 'The model compiler could not be loaded'));
        }
        if (outOfMemory) {
          return resolve({ failure: `Compilation ran out of memory (limit ${this.memoryMb} MB)` });
        }
        const output = code === 0 ? parseOutput(Buffer.concat(result).toString('utf8')) : null;
        if (output) return resolve(output);
        this.logger.warn(
          `model compiler child ended without a result (code ${code}, signal ${signal}): ${stderr.trim()}`,
        );
        resolve({
          failure: `The compiler stopped unexpectedly (${signal ? `signal ${signal}` : `exit code ${code}`})`,
        });
      });

      const input: ChildInput = { compilerEntry: entry, files };
      child.stdin?.end(JSON.stringify(input));
    });
  }

  /**
   * The schema compiler's entry file, resolved here so the child needs no module lookup of its
   * own, and the node_modules directory that holds it and its dependencies.
   */
  private compilerLocation(): { entry: string; nodeModules: string } {
    let entry: string;
    try {
      entry = fs.realpathSync(createRequire(import.meta.url).resolve('@cubejs-backend/schema-compiler'));
    } catch (error) {
      const reason = (error as Error).message.split('\n')[0];
      throw compilerError('compiler_unavailable', `The model compiler is not installed: ${reason}`);
    }
    const marker = `${path.sep}node_modules${path.sep}`;
    const at = entry.indexOf(marker);
    if (at < 0)
      throw compilerError('compiler_unavailable', `The model compiler is not in node_modules: ${entry}`);
    return { entry, nodeModules: entry.slice(0, at + marker.length - 1) };
  }
}

/** The child's result, checked: it comes from a process that ran untrusted code. */
function parseOutput(text: string): ChildOutput | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { errors, cubesCount } = value as Record<string, unknown>;
  if (!Array.isArray(errors) || !Number.isSafeInteger(cubesCount) || (cubesCount as number) < 0) return null;
  const checked: ChildOutput['errors'] = [];
  for (const e of errors.slice(0, MAX_ERRORS) as unknown[]) {
    const { fileName, message } = (typeof e === 'object' && e !== null ? e : {}) as Record<string, unknown>;
    if (typeof message !== 'string') return null;
    const text = message.slice(0, MAX_MESSAGE);
    checked.push(typeof fileName === 'string' ? { fileName, message: text } : { message: text });
  }
  if (errors.length > MAX_ERRORS)
    checked.push({ message: `... and ${errors.length - MAX_ERRORS} more errors` });
  return { errors: checked, cubesCount: cubesCount as number };
}
