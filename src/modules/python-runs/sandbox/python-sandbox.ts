import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PythonChildProcess, type ChildOutcome } from './python-child-process.js';
import { truncationMarker, type JobHeader, type OutputLimits } from './protocol.js';
import {
  SandboxSetupError,
  childCommand,
  childScriptArgs,
  probeSandbox,
  resolveLayout,
  type SandboxLayout,
} from './sandbox-command.js';

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
  /** The built child (python-child.mjs); found beside this module or in the test build. */
  childScript?: string;
  logger?: SandboxLogger;
}

export interface SandboxLogger {
  warn(message: string): void;
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

export interface PythonSandboxStats {
  /** Children started since the pool was made. */
  started: number;
  warm: number;
  starting: number;
  running: number;
  runs: number;
  /** Runs that found a warm child waiting. */
  servedWarm: number;
}

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

/** After this many children in a row fail to start, the sandbox reports itself unavailable. */
const FAILURES_UNAVAILABLE = 3;
const RETRY_MAX_MS = 30_000;
const MAX_ERROR_CHARS = 8_000;
/** What V8 and the C++ runtime print when an allocation fails for good. */
const OUT_OF_MEMORY = /out of memory|heap limit|allocation failed|bad_alloc|Cannot allocate memory/i;

/**
 * Where the built child is. In a build it sits beside this module
 * (`dist/src/modules/python-runs/sandbox/python-child.mjs`). Under Jest this module is the
 * TypeScript source with no build beside it: the child is then the one in the build the test run
 * uses (TEST_DIST_DIR, default `dist`), as for the model compiler.
 */
function locateChildScript(): string {
  const here = fileURLToPath(import.meta.url);
  const beside = path.join(path.dirname(here), 'python-child.mjs');
  if (here.endsWith('.js')) return beside;
  const root = path.resolve(path.dirname(here), '../../../..');
  return path.resolve(root, process.env.TEST_DIST_DIR ?? 'dist', path.relative(root, beside));
}

interface Waiter {
  resolve(child: PythonChildProcess): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export class PythonSandbox {
  /** Names this pool's processes (`--pool=<tag>` on their command lines). */
  readonly tag = randomUUID();
  private readonly options: Required<Omit<PythonSandboxOptions, 'logger'>> & { logger?: SandboxLogger };
  private state: 'new' | 'probing' | 'ready' | 'unavailable' | 'closed' = 'new';
  private reason?: string;
  private layout?: SandboxLayout;
  private starting?: Promise<void>;
  private readonly children = new Set<PythonChildProcess>();
  private readonly idle: PythonChildProcess[] = [];
  private warming = 0;
  private running = 0;
  private waiters: Waiter[] = [];
  private listeners: (() => void)[] = [];
  private consecutiveFailures = 0;
  private lastFailure?: string;
  private retryTimer?: NodeJS.Timeout;
  private counters = { started: 0, runs: 0, servedWarm: 0 };

  constructor(options: PythonSandboxOptions = {}) {
    this.options = {
      ...DEFAULTS,
      bwrapPath: 'bwrap',
      prlimitPath: 'prlimit',
      childScript: locateChildScript(),
      ...withoutUndefined(options),
    };
    if (!(Number.isInteger(this.options.poolSize) && this.options.poolSize >= 0)) {
      throw new RangeError('poolSize must be an integer of 0 or more');
    }
  }

  /**
   * Checks once that the sandbox can be built here (a trivial Node in bubblewrap), then starts
   * warming the pool. Never throws: a failure is what {@link available} then reports.
   */
  start(): Promise<void> {
    this.starting ??= this.probe();
    return this.starting;
  }

  /** True, or why code cannot run now. */
  available(): true | string {
    switch (this.state) {
      case 'closed':
        return 'The Python sandbox is closed';
      case 'new':
      case 'probing':
        return 'The Python sandbox has not been checked yet';
      case 'unavailable':
        return this.reason ?? 'The Python sandbox cannot be set up';
      case 'ready':
        if (this.consecutiveFailures >= FAILURES_UNAVAILABLE) {
          return `The Python processes fail to start: ${this.lastFailure ?? 'unknown reason'}`;
        }
        return true;
    }
  }

  stats(): PythonSandboxStats {
    return { ...this.counters, warm: this.idle.length, starting: this.warming, running: this.running };
  }

  /** Resolves once `poolSize` children are warm; rejects if the sandbox is or becomes unavailable. */
  async whenWarm(timeoutMs = 120_000): Promise<void> {
    await this.start();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const available = this.available();
      if (available !== true) throw new PythonSandboxError(this.unavailableCode(), available);
      if (this.idle.length >= this.options.poolSize) return;
      const left = deadline - Date.now();
      if (left <= 0) throw new PythonSandboxError('sandbox_busy', 'The Python pool did not warm up in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.listeners.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async run(
    code: string,
    rows: readonly unknown[],
    options: { timeoutMs?: number } = {},
  ): Promise<PythonRunResult> {
    await this.start();
    const available = this.available();
    if (available !== true) throw new PythonSandboxError(this.unavailableCode(), available);
    const job = this.job(code, rows);
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs;
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      throw new PythonSandboxError('input_invalid', 'The timeout must be a positive number of milliseconds');
    }
    const child = await this.acquire();
    this.running += 1;
    this.counters.runs += 1;
    try {
      const answered = child.send(job, timeoutMs);
      this.fill();
      const outcome = await answered;
      // Killed by close(), not by its own doing: no result to give.
      if (this.state === 'closed' && outcome.kind !== 'answer') {
        throw new PythonSandboxError('sandbox_closed', 'The Python sandbox was closed');
      }
      return this.result(outcome, timeoutMs, child);
    } finally {
      this.running -= 1;
    }
  }

  /** Kills every child, warm or running; resolves once they are gone. */
  async close(): Promise<void> {
    if (this.state === 'closed') return this.allEnded();
    this.state = 'closed';
    clearTimeout(this.retryTimer);
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(new PythonSandboxError('sandbox_closed', 'The Python sandbox was closed'));
    }
    this.idle.length = 0;
    for (const child of this.children) child.kill();
    this.notify();
    await this.allEnded();
  }

  private allEnded(): Promise<void> {
    if (this.children.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const check = (): void => {
        if (this.children.size === 0) resolve();
        else this.listeners.push(check);
      };
      check();
    });
  }

  private async probe(): Promise<void> {
    this.state = 'probing';
    try {
      const layout = await resolveLayout({
        bwrapPath: this.options.bwrapPath,
        prlimitPath: this.options.prlimitPath,
        childScript: this.options.childScript,
        resolveFrom: import.meta.url,
      });
      await probeSandbox(layout, { memoryMb: this.options.memoryMb });
      this.layout = layout;
      if (this.state !== 'probing') return; // closed meanwhile
      this.state = 'ready';
      this.fill();
    } catch (error) {
      if (this.state !== 'probing') return;
      this.state = 'unavailable';
      this.reason =
        error instanceof SandboxSetupError
          ? `The Python sandbox cannot be set up: ${error.message}`
          : `The Python sandbox could not be checked: ${(error as Error).message}`;
      this.options.logger?.warn(`${this.reason}. Python runs are refused.`);
    }
    this.notify();
  }

  private unavailableCode(): PythonSandboxErrorCode {
    return this.state === 'closed' ? 'sandbox_closed' : 'sandbox_unavailable';
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

  private acquire(): Promise<PythonChildProcess> {
    const child = this.idle.shift();
    if (child) {
      // Its replacement starts once the job is sent (run), not before.
      this.counters.servedWarm += 1;
      return Promise.resolve(child);
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(
            new PythonSandboxError(
              'sandbox_busy',
              `No Python process became ready within ${this.options.acquireTimeoutMs} ms`,
            ),
          );
        }, this.options.acquireTimeoutMs),
      };
      this.waiters.push(waiter);
      this.fill();
    });
  }

  /**
   * Starts children until `poolSize` are warm or warming, plus one per run waiting for a child
   * (not while backing off after failures). At most `poolSize` (at least one) start at once.
   */
  private fill(): void {
    if (this.state !== 'ready' || !this.layout || this.retryTimer) return;
    while (this.idle.length + this.warming < this.options.poolSize + this.waiters.length) {
      if (this.warming >= Math.max(this.options.poolSize, 1)) return;
      this.spawn(this.layout);
    }
  }

  private spawn(layout: SandboxLayout): void {
    const { file, args } = childCommand(
      layout,
      { memoryMb: this.options.memoryMb },
      childScriptArgs(this.tag),
    );
    const { maxStdoutBytes, maxStderrBytes, maxOutputBytes } = this.options;
    this.warming += 1;
    this.counters.started += 1;
    const child = new PythonChildProcess(
      {
        file,
        args,
        seccomp: layout.seccomp,
        readyTimeoutMs: this.options.startTimeoutMs,
        // JSON may write a byte of text as six (\u0000), and `output` is parsed and written again.
        maxAnswerBytes: 6 * (maxStdoutBytes + maxStderrBytes) + 2 * maxOutputBytes + 64 * 1024,
      },
      {
        ready: (c) => this.childReady(c),
        failed: (_c, reason) => this.childFailed(reason),
        lost: (c) => this.childLost(c),
        closed: (c) => {
          this.children.delete(c);
          this.notify();
        },
      },
    );
    this.children.add(child);
  }

  private childReady(child: PythonChildProcess): void {
    this.warming -= 1;
    this.consecutiveFailures = 0;
    this.lastFailure = undefined;
    if (this.state === 'closed') return child.kill();
    const waiter = this.waiters.shift();
    if (waiter) {
      clearTimeout(waiter.timer);
      waiter.resolve(child);
    } else {
      this.idle.push(child);
    }
    this.fill();
    this.notify();
  }

  private childFailed(reason: string): void {
    this.warming -= 1;
    if (this.state === 'closed') return;
    this.consecutiveFailures += 1;
    this.lastFailure = reason;
    this.options.logger?.warn(`A Python sandbox process failed to start: ${reason}`);
    if (this.consecutiveFailures >= FAILURES_UNAVAILABLE) {
      const available = this.available();
      for (const waiter of this.waiters.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.reject(new PythonSandboxError('sandbox_unavailable', String(available)));
      }
    }
    // Back off, doubling, so a machine that cannot start them is not kept busy trying.
    const delay = Math.min(RETRY_MAX_MS, 500 * 2 ** (this.consecutiveFailures - 1));
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.fill();
    }, delay);
    this.retryTimer.unref();
    this.notify();
  }

  private childLost(child: PythonChildProcess): void {
    const at = this.idle.indexOf(child);
    if (at >= 0) this.idle.splice(at, 1);
    if (this.state === 'closed') return;
    this.options.logger?.warn(
      `A warm Python sandbox process ended: ${child.stderrTail().trim().slice(-500)}`,
    );
    this.fill();
  }

  private notify(): void {
    for (const listener of this.listeners.splice(0)) listener();
  }

  private result(outcome: ChildOutcome, timeoutMs: number, child: PythonChildProcess): PythonRunResult {
    switch (outcome.kind) {
      case 'answer':
        return (
          this.checkedAnswer(outcome.message) ??
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
        this.options.logger?.warn(
          `A Python sandbox process (pid ${child.pid}) ended without an answer (${how}): ${outcome.stderr.trim().slice(-1000)}`,
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
    const { type, stdout, stderr, stdoutTruncated, stderrTruncated, executionError, outputData } =
      message as Record<string, unknown>;
    if (type !== 'result' || typeof stdout !== 'string' || typeof stderr !== 'string') return null;
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

/**
 * How a child ended, in words. bwrap passes on its command's end as an exit code, 128 + the signal
 * when the command was killed by one (a crash: SIGSEGV, SIGABRT); a signal here is our SIGKILL.
 */
function endedHow(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `signal ${signal}`;
  if (code !== null && code > 128) {
    const name = Object.entries(os.constants.signals).find(([, n]) => n === code - 128)?.[0];
    if (name) return `signal ${name}`;
  }
  return `exit code ${code}`;
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
