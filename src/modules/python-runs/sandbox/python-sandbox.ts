import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  SANDBOX_DIR,
  SANDBOX_NODE_MODULES,
  appBinds,
  buildRoot,
  packageDir,
  packageClosureBinds,
  sandboxAppPath,
} from '../../../core/sandbox/sandbox-command.js';
import {
  SandboxError,
  SandboxPool,
  endedHow,
  type JobOutcome,
  type SandboxLogger,
  type SandboxStats,
} from '../../../core/sandbox/sandbox-pool.js';
import { truncationMarker, type JobHeader, type OutputLimits } from './protocol.js';

const execFileAsync = promisify(execFile);

/**
 * Runs untrusted Python (a report's code) in Pyodide inside bubblewrap, in warm single-use
 * children. Framework-free: the API wraps it in a provider and maps its errors to HTTP.
 *
 * The contract for the code: `rows` is the input, a list of dicts (the rows as `json.loads` gives
 * them); what it prints is `stdout` and `stderr`; the value it leaves in a variable `output`, if
 * any, is `outputData` (JSON: dicts, lists, strings, numbers, booleans, None; tuples and sets
 * become lists, dates and times ISO strings, Decimals numbers, NaN and infinities null). An
 * exception is `executionError`, its last traceback line, with the traceback on stderr; `output`
 * is then not sent. Top-level `await` works. Python's standard library only (no network, so no
 * package can be installed).
 *
 * Never runs code without the sandbox: where it cannot be set up, {@link available} says why
 * and {@link run} throws `sandbox_unavailable`.
 */

export interface PythonSandboxOptions {
  /**
   * Warm children kept ready (PYTHON_POOL_SIZE). Default 1. With 0 none is kept: each run starts
   * its own child when it asks for one (and pays Pyodide's start).
   */
  poolSize?: number;
  /** A run's kill timer, from the job being sent (PYTHON_RUN_TIMEOUT_MS). Default 10 s. */
  timeoutMs?: number;
  /** A child's private writable memory, RLIMIT_DATA (PYTHON_RUN_MEMORY_MB). Default 1024 MB. */
  memoryMb?: number;
  /** What stdout and stderr keep; past it they are cut and marked. Default 64 KiB each. */
  maxStdoutBytes?: number;
  maxStderrBytes?: number;
  /** `output` as JSON. Default 1 MiB. */
  maxOutputBytes?: number;
  /** The code and the rows as JSON, together. Default 16 MiB. */
  maxInputBytes?: number;
  /** A starting child must be ready within this, or it is killed and another started. Default 60 s. */
  startTimeoutMs?: number;
  /** How long a run waits for a ready child when none is warm. Default 60 s. */
  acquireTimeoutMs?: number;
  /** Bare names are looked for in the system's directories (not PATH). */
  bwrapPath?: string;
  prlimitPath?: string;
  /** The children's niceness (SANDBOX_NICENESS). Default 10. */
  niceness?: number;
  logger?: SandboxLogger;
}

export interface PythonRunResult {
  stdout: string;
  stderr: string;
  executionError?: string;
  outputData?: unknown;
  /** Why there is an `executionError`: the code raised, or the sandbox stopped it. */
  errorKind?: 'exception' | 'timeout' | 'out_of_memory' | 'crashed';
}

export type PythonSandboxErrorCode =
  /** No sandbox on this machine (or its children keep failing to start): the API's 503. */
  | 'sandbox_unavailable'
  /** No child became ready in time. */
  | 'sandbox_busy'
  | 'sandbox_closed'
  | 'input_too_large'
  | 'input_invalid';

export class PythonSandboxError extends Error {
  constructor(
    readonly code: PythonSandboxErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PythonSandboxError';
  }
}

export type PythonSandboxStats = SandboxStats;

const DEFAULTS = {
  poolSize: 1,
  timeoutMs: 10_000,
  memoryMb: 1024,
  maxStdoutBytes: 64 * 1024,
  maxStderrBytes: 64 * 1024,
  maxOutputBytes: 1024 * 1024,
  maxInputBytes: 16 * 1024 * 1024,
  startTimeoutMs: 60_000,
  acquireTimeoutMs: 60_000,
};

const MAX_ERROR_CHARS = 8_000;
/** What V8 and the C++ runtime print when an allocation fails for good. */
const OUT_OF_MEMORY = /out of memory|heap limit|allocation failed|bad_alloc|Cannot allocate memory/i;

/** The child in the build, relative to it, and what it imports; the snapshot maker. */
const CHILD = 'src/modules/python-runs/sandbox/python-child.mjs';
const DRIVER = 'src/modules/python-runs/sandbox/python-driver.mjs';
const CHANNEL = 'src/core/sandbox/child-channel.mjs';
const SNAPSHOT_MAKER = 'src/modules/python-runs/sandbox/python-snapshot.mjs';
/** Where a child finds the snapshot, read-only. */
const SANDBOX_SNAPSHOT = `${SANDBOX_DIR}/python.snapshot`;

/** The snapshot of this process's build, made once per process (null: children load Pyodide). */
let snapshotMade: Promise<string | null> | null = null;

/**
 * The memory snapshot of a prepared Pyodide (python-snapshot.mts) children start from: made at the
 * first pool start of this process, by a plain child with an empty environment (it runs only this
 * service's code), in a directory of this process's own, removed when it exits. Without one (the
 * maker failed) children load Pyodide themselves, seconds slower, and the log says why.
 */
function preparedSnapshot(timeoutMs: number, logger?: SandboxLogger): Promise<string | null> {
  snapshotMade ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'python-snapshot-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'python.snapshot');
    const maker = path.join(buildRoot(), SNAPSHOT_MAKER);
    const pyodide = `${packageDir('pyodide', import.meta.url)}/`;
    try {
      await execFileAsync(process.execPath, [maker, pyodide, file], {
        env: {},
        cwd: dir,
        timeout: timeoutMs,
        maxBuffer: 1024 * 1024,
      });
      return file;
    } catch (error) {
      logger?.warn(
        `The Python snapshot could not be made, so each Python process loads Pyodide itself: ${String((error as Error).message).slice(0, 2_000)}`,
      );
      return null;
    }
  })();
  return snapshotMade;
}

export class PythonSandbox {
  private readonly options: Required<
    Omit<PythonSandboxOptions, 'logger' | 'bwrapPath' | 'prlimitPath' | 'niceness'>
  >;
  private readonly pool: SandboxPool;
  private readonly logger?: SandboxLogger;

  constructor(options: PythonSandboxOptions = {}) {
    this.options = { ...DEFAULTS, ...withoutUndefined(options) };
    this.logger = options.logger;
    const { maxStdoutBytes, maxStderrBytes, maxOutputBytes } = this.options;
    this.pool = new SandboxPool({
      label: 'Python',
      prepare: async () => {
        // Pyodide and what it loads (ws), the child, the driver and the channel, and the snapshot
        // children start from: nothing else of the host.
        const binds = [
          ...appBinds([CHILD, DRIVER, CHANNEL], 'The Python child'),
          ...packageClosureBinds('pyodide', import.meta.url),
        ];
        const nodeArgs = [sandboxAppPath(CHILD), `${SANDBOX_NODE_MODULES}/pyodide/`];
        const snapshot = await preparedSnapshot(this.options.startTimeoutMs, this.logger);
        if (snapshot) {
          binds.push({ source: snapshot, target: SANDBOX_SNAPSHOT });
          nodeArgs.push(`--snapshot=${SANDBOX_SNAPSHOT}`);
        }
        return { binds, nodeArgs };
      },
      poolSize: this.options.poolSize,
      timeoutMs: this.options.timeoutMs,
      memoryMb: this.options.memoryMb,
      // JSON may write a byte of text as six (\u0000), and `output` is parsed and written again.
      maxAnswerBytes: 6 * (maxStdoutBytes + maxStderrBytes) + 2 * maxOutputBytes + 64 * 1024,
      startTimeoutMs: this.options.startTimeoutMs,
      acquireTimeoutMs: this.options.acquireTimeoutMs,
      bwrapPath: options.bwrapPath,
      prlimitPath: options.prlimitPath,
      niceness: options.niceness,
      logger: options.logger,
    });
  }

  /** Names this pool's processes (`--pool=<tag>` on their command lines). */
  get tag(): string {
    return this.pool.tag;
  }

  /** Checks once that the sandbox can be built here, then warms the pool. Never throws. */
  start(): Promise<void> {
    return this.pool.start();
  }

  /** True, or why code cannot run now. */
  available(): true | string {
    return this.pool.available();
  }

  stats(): PythonSandboxStats {
    return this.pool.stats();
  }

  /** Resolves once `poolSize` children are warm; rejects if the sandbox is or becomes unavailable. */
  async whenWarm(timeoutMs = 120_000): Promise<void> {
    await pythonErrors(this.pool.whenWarm(timeoutMs));
  }

  async run(
    code: string,
    rows: readonly unknown[],
    options: { timeoutMs?: number } = {},
  ): Promise<PythonRunResult> {
    const job = this.job(code, rows);
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      throw new PythonSandboxError('input_invalid', 'The timeout must be a positive number of milliseconds');
    }
    // The pool checks that the sandbox is available before it takes a child.
    const outcome = await pythonErrors(this.pool.run(job, { timeoutMs }));
    return this.result(outcome, timeoutMs);
  }

  /** Kills every child, warm or running; resolves once they are gone. */
  close(): Promise<void> {
    return this.pool.close();
  }

  /** The job as the child reads it: a header line, then the rows as JSON. */
  private job(code: string, rows: readonly unknown[]): Buffer {
    if (typeof code !== 'string') throw new PythonSandboxError('input_invalid', 'The code must be a string');
    if (!Array.isArray(rows)) throw new PythonSandboxError('input_invalid', 'The rows must be an array');
    let rowsJson: string;
    try {
      rowsJson = JSON.stringify(rows);
    } catch (error) {
      throw new PythonSandboxError(
        'input_invalid',
        `The rows cannot be sent as JSON: ${(error as Error).message}`,
      );
    }
    const limits: OutputLimits = {
      maxStdoutBytes: this.options.maxStdoutBytes,
      maxStderrBytes: this.options.maxStderrBytes,
      maxOutputBytes: this.options.maxOutputBytes,
    };
    const header: JobHeader = { code, limits };
    const job = Buffer.from(`${JSON.stringify(header)}\n${rowsJson}`);
    if (job.length > this.options.maxInputBytes) {
      throw new PythonSandboxError(
        'input_too_large',
        `The code and its rows take ${job.length} bytes as JSON, more than the ${this.options.maxInputBytes} allowed`,
      );
    }
    return job;
  }

  private result(outcome: JobOutcome, timeoutMs: number): PythonRunResult {
    switch (outcome.kind) {
      case 'answer':
        return (
          this.checkedAnswer(outcome.payload) ??
          this.crashed('The Python process gave an answer that is not valid')
        );
      case 'invalid':
        return this.crashed('The Python process gave an answer that is not valid');
      case 'too_large':
        return this.crashed('The Python process answered more than this service accepts');
      case 'timeout':
        return {
          stdout: '',
          stderr: '',
          executionError: `TimeoutError: the code ran longer than ${timeoutMs} ms and was stopped`,
          errorKind: 'timeout',
        };
      case 'ended': {
        if (OUT_OF_MEMORY.test(outcome.stderr)) {
          return {
            stdout: '',
            stderr: '',
            executionError: `MemoryError: the code used more than the ${this.options.memoryMb} MB allowed and was stopped`,
            errorKind: 'out_of_memory',
          };
        }
        const how = endedHow(outcome.code, outcome.signal);
        this.logger?.warn(
          `A Python sandbox process (pid ${outcome.pid}) ended without an answer (${how}): ${outcome.stderr.trim().slice(-1000)}`,
        );
        return this.crashed(`The Python process stopped unexpectedly (${how})`);
      }
    }
  }

  private crashed(message: string): PythonRunResult {
    return { stdout: '', stderr: '', executionError: message, errorKind: 'crashed' };
  }

  /** The child's answer, checked and capped again: it comes from the process that ran the code. */
  private checkedAnswer(message: unknown): PythonRunResult | null {
    if (typeof message !== 'object' || message === null) return null;
    const { stdout, stderr, stdoutTruncated, stderrTruncated, executionError, outputData } =
      message as Record<string, unknown>;
    if (typeof stdout !== 'string' || typeof stderr !== 'string') return null;
    if (executionError !== undefined && typeof executionError !== 'string') return null;
    const result: PythonRunResult = {
      stdout: capped(stdout, this.options.maxStdoutBytes, stdoutTruncated === true),
      stderr: capped(stderr, this.options.maxStderrBytes, stderrTruncated === true),
    };
    if (typeof executionError === 'string') {
      result.executionError = executionError.slice(0, MAX_ERROR_CHARS) || 'Error';
      result.errorKind = 'exception';
    } else if (outputData !== undefined) {
      result.outputData = outputData;
    }
    return result;
  }
}

/** The pool's errors as this sandbox's (the same codes). */
async function pythonErrors<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof SandboxError) throw new PythonSandboxError(error.code, error.message);
    throw error;
  }
}

/** The text cut to `limit` bytes (at a character boundary), marked when it was cut here or before. */
function capped(text: string, limit: number, truncated: boolean): string {
  let kept = text;
  if (Buffer.byteLength(text) > limit) {
    kept = Buffer.from(text)
      .subarray(0, limit)
      .toString('utf8')
      .replace(/\uFFFD$/, '');
    truncated = true;
  }
  return truncated ? kept + truncationMarker(limit) : kept;
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
