import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { SandboxChildProcess, type ChildOutcome } from './sandbox-child.js';
import {
  SandboxSetupError,
  childCommand,
  probeSandbox,
  resolveLayout,
  type Bind,
  type SandboxLayout,
} from './sandbox-command.js';

/**
 * A pool of warm, single-use sandboxed children of one kind (the Python runs, the model compiler):
 * each child loads what it needs, says it is ready, takes one job and ends. Framework-free: the
 * modules wrap it in a provider and turn its outcomes into their results and HTTP errors.
 *
 * Never runs a job without the sandbox: where it cannot be built, {@link available} says why and
 * {@link run} throws `sandbox_unavailable`.
 */

/** A kind's read-only binds and Node's arguments. */
export interface SandboxCommand {
  binds: Bind[];
  nodeArgs: string[];
  /** The V8 isolates a child runs: its main thread and its worker threads. Default 1. */
  isolates?: number;
}

/** What makes one kind of child: its files, Node's flags, its limits. */
export interface SandboxKind {
  /** Names the kind in messages: "The Python sandbox ...", "No Python process ...". */
  label: string;
  /**
   * Found once, at start: the kind's read-only binds (its child script, the channel, its npm
   * packages) and Node's arguments (flags, the script inside the sandbox, its arguments). Throws a
   * {@link SandboxSetupError} for what is missing.
   */
  prepare(): SandboxCommand | Promise<SandboxCommand>;
  /** Warm children kept ready. With 0 none is: each job starts its own child when it asks for one. */
  poolSize: number;
  /** A job's kill timer, from the job being sent. */
  timeoutMs: number;
  /** A child's private writable memory, RLIMIT_DATA: the JS heap, Buffers, wasm memory, malloc. */
  memoryMb: number;
  /** The most a child may write on the result pipe for its answer. */
  maxAnswerBytes: number;
  /** A starting child must be ready within this, or it is killed and another started. Default 60 s. */
  startTimeoutMs?: number;
  /** How long a job waits for a ready child when none is warm. Default 60 s. */
  acquireTimeoutMs?: number;
  /**
   * When a used child's replacement starts: once the job is sent (default), or once it has ended
   * (a CPU-heavy job, such as a compile, then does not share the CPU with a child warming up).
   */
  replaceAfterJob?: boolean;
  /** Bare names are looked for in the system's directories (not PATH). */
  bwrapPath?: string;
  prlimitPath?: string;
  /** The children's niceness (SANDBOX_NICENESS). Default 10. */
  niceness?: number;
  logger?: SandboxLogger;
}

export interface SandboxLogger {
  warn(message: string): void;
}

export type SandboxErrorCode =
  /** No sandbox on this machine (or its children keep failing to start). */
  | 'sandbox_unavailable'
  /** No child became ready in time. */
  | 'sandbox_busy'
  | 'sandbox_closed';

export class SandboxError extends Error {
  constructor(
    readonly code: SandboxErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SandboxError';
  }
}

export interface SandboxStats {
  /** Children started since the pool was made. */
  started: number;
  warm: number;
  starting: number;
  running: number;
  runs: number;
  /** Runs that found a warm child waiting. */
  servedWarm: number;
}

/** How a job ended, and on which child (for the log). */
export type JobOutcome = ChildOutcome & { pid?: number };

/** After this many children in a row fail to start, the sandbox reports itself unavailable. */
const FAILURES_UNAVAILABLE = 3;
const RETRY_MAX_MS = 30_000;

interface Waiter {
  resolve(child: SandboxChildProcess): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export class SandboxPool {
  /** Names this pool's processes (`--pool=<tag>` on their command lines). */
  readonly tag = randomUUID();
  private readonly kind: Required<Omit<SandboxKind, 'logger'>> & { logger?: SandboxLogger };
  private state: 'new' | 'probing' | 'ready' | 'unavailable' | 'closed' = 'new';
  private reason?: string;
  private layout?: SandboxLayout;
  private command?: SandboxCommand;
  private starting?: Promise<void>;
  private readonly children = new Set<SandboxChildProcess>();
  private readonly idle: SandboxChildProcess[] = [];
  private warming = 0;
  private running = 0;
  private waiters: Waiter[] = [];
  private listeners: (() => void)[] = [];
  private consecutiveFailures = 0;
  private lastFailure?: string;
  private retryTimer?: NodeJS.Timeout;
  private counters = { started: 0, runs: 0, servedWarm: 0 };

  constructor(kind: SandboxKind) {
    this.kind = {
      startTimeoutMs: 60_000,
      acquireTimeoutMs: 60_000,
      replaceAfterJob: false,
      bwrapPath: 'bwrap',
      prlimitPath: 'prlimit',
      niceness: 10,
      ...withoutUndefined(kind),
    } as SandboxPool['kind'];
    if (!(Number.isInteger(this.kind.poolSize) && this.kind.poolSize >= 0)) {
      throw new RangeError('poolSize must be an integer of 0 or more');
    }
  }

  get label(): string {
    return this.kind.label;
  }

  get memoryMb(): number {
    return this.kind.memoryMb;
  }

  get timeoutMs(): number {
    return this.kind.timeoutMs;
  }

  /**
   * Checks once that the sandbox can be built here (a trivial Node in bubblewrap) and that the
   * kind's files are there, then starts warming the pool. Never throws: a failure is what
   * {@link available} then reports.
   */
  start(): Promise<void> {
    this.starting ??= this.probe();
    return this.starting;
  }

  /** True, or why no job can run now. */
  available(): true | string {
    const label = this.kind.label;
    switch (this.state) {
      case 'closed':
        return `The ${label} sandbox is closed`;
      case 'new':
      case 'probing':
        return `The ${label} sandbox has not been checked yet`;
      case 'unavailable':
        return this.reason ?? `The ${label} sandbox cannot be set up`;
      case 'ready':
        if (this.consecutiveFailures >= FAILURES_UNAVAILABLE) {
          return `The ${label} processes fail to start: ${this.lastFailure ?? 'unknown reason'}`;
        }
        return true;
    }
  }

  stats(): SandboxStats {
    return { ...this.counters, warm: this.idle.length, starting: this.warming, running: this.running };
  }

  /** Resolves once `poolSize` children are warm; rejects if the sandbox is or becomes unavailable. */
  async whenWarm(timeoutMs = 120_000): Promise<void> {
    await this.start();
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const available = this.available();
      if (available !== true) throw new SandboxError(this.unavailableCode(), available);
      if (this.idle.length >= this.kind.poolSize) return;
      const left = deadline - Date.now();
      if (left <= 0)
        throw new SandboxError('sandbox_busy', `The ${this.kind.label} pool did not warm up in time`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.listeners.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /**
   * Runs one job on a ready child (waiting for one if none is warm). Throws {@link SandboxError}
   * only before the job is sent (no sandbox, no child in time, closed); once sent, every end is an
   * outcome, and only `answer` is the child's own.
   */
  async run(job: Buffer, options: { timeoutMs?: number; spareWarm?: boolean } = {}): Promise<JobOutcome> {
    await this.start();
    const available = this.available();
    if (available !== true) throw new SandboxError(this.unavailableCode(), available);
    const timeoutMs = options.timeoutMs ?? this.kind.timeoutMs;
    if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      throw new RangeError('The timeout must be a positive number of milliseconds');
    }
    const child = await this.acquire(options.spareWarm ?? false);
    this.running += 1;
    this.counters.runs += 1;
    try {
      const answered = child.send(job, timeoutMs);
      if (!this.kind.replaceAfterJob) this.fill();
      const outcome = await answered;
      // Killed by close(), not by its own doing: no result to give.
      if (this.state === 'closed' && outcome.kind !== 'answer') {
        throw new SandboxError('sandbox_closed', `The ${this.kind.label} sandbox was closed`);
      }
      return { ...outcome, pid: child.pid };
    } finally {
      this.running -= 1;
      if (this.kind.replaceAfterJob) this.fill();
    }
  }

  /** Kills every child, warm or running; resolves once they are gone. */
  async close(): Promise<void> {
    if (this.state === 'closed') return this.allEnded();
    this.state = 'closed';
    clearTimeout(this.retryTimer);
    for (const waiter of this.waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(new SandboxError('sandbox_closed', `The ${this.kind.label} sandbox was closed`));
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
        bwrapPath: this.kind.bwrapPath,
        prlimitPath: this.kind.prlimitPath,
        niceness: this.kind.niceness,
      });
      await probeSandbox(layout, { memoryMb: this.kind.memoryMb });
      // After the probe: a kind's preparation may take seconds (the Python snapshot).
      const command = await this.kind.prepare();
      this.layout = layout;
      this.command = command;
      if (this.state !== 'probing') return; // closed meanwhile
      this.state = 'ready';
      this.fill();
    } catch (error) {
      if (this.state !== 'probing') return;
      this.state = 'unavailable';
      this.reason =
        error instanceof SandboxSetupError
          ? `The ${this.kind.label} sandbox cannot be set up: ${error.message}`
          : `The ${this.kind.label} sandbox could not be checked: ${(error as Error).message}`;
      this.kind.logger?.warn(`${this.reason}. Nothing of this kind runs.`);
    }
    this.notify();
  }

  private unavailableCode(): SandboxErrorCode {
    return this.state === 'closed' ? 'sandbox_closed' : 'sandbox_unavailable';
  }

  /**
   * A ready child: a warm one, or one started for this job. `spareWarm`: take a warm child only
   * when another stays warm (the caller's account floods; the last warm one is kept for others).
   */
  private acquire(spareWarm: boolean): Promise<SandboxChildProcess> {
    const child = spareWarm && this.idle.length <= 1 ? undefined : this.idle.shift();
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
            new SandboxError(
              'sandbox_busy',
              `No ${this.kind.label} process became ready within ${this.kind.acquireTimeoutMs} ms`,
            ),
          );
        }, this.kind.acquireTimeoutMs),
      };
      this.waiters.push(waiter);
      this.fill();
    });
  }

  /**
   * Starts children until `poolSize` are warm or warming, plus one per job waiting for a child
   * (not while backing off after failures). At most `poolSize` (at least one) start at once.
   */
  private fill(): void {
    if (this.state !== 'ready' || !this.layout || !this.command || this.retryTimer) return;
    while (this.idle.length + this.warming < this.kind.poolSize + this.waiters.length) {
      if (this.warming >= Math.max(this.kind.poolSize, 1)) return;
      this.spawn(this.layout, this.command);
    }
  }

  private spawn(layout: SandboxLayout, command: SandboxCommand): void {
    const limits = { memoryMb: this.kind.memoryMb, isolates: command.isolates };
    const { file, args } = childCommand(layout, limits, command.binds, [
      ...command.nodeArgs,
      `--pool=${this.tag}`,
    ]);
    this.warming += 1;
    this.counters.started += 1;
    const child = new SandboxChildProcess(
      {
        file,
        args,
        seccomp: layout.seccomp,
        readyTimeoutMs: this.kind.startTimeoutMs,
        maxAnswerBytes: this.kind.maxAnswerBytes,
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

  private childReady(child: SandboxChildProcess): void {
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
    this.kind.logger?.warn(`A ${this.kind.label} sandbox process failed to start: ${reason}`);
    if (this.consecutiveFailures >= FAILURES_UNAVAILABLE) {
      const available = this.available();
      for (const waiter of this.waiters.splice(0)) {
        clearTimeout(waiter.timer);
        waiter.reject(new SandboxError('sandbox_unavailable', String(available)));
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

  private childLost(child: SandboxChildProcess): void {
    const at = this.idle.indexOf(child);
    if (at >= 0) this.idle.splice(at, 1);
    if (this.state === 'closed') return;
    this.kind.logger?.warn(
      `A warm ${this.kind.label} sandbox process ended: ${child.stderrTail().trim().slice(-500)}`,
    );
    this.fill();
  }

  private notify(): void {
    for (const listener of this.listeners.splice(0)) listener();
  }
}

/**
 * How a child ended, in words. bwrap passes on its command's end as an exit code, 128 + the signal
 * when the command was killed by one (a crash: SIGSEGV, SIGABRT); a signal here is our SIGKILL.
 */
export function endedHow(code: number | null, signal: NodeJS.Signals | null): string {
  if (signal) return `signal ${signal}`;
  if (code !== null && code > 128) {
    const name = Object.entries(os.constants.signals).find(([, n]) => n === code - 128)?.[0];
    if (name) return `signal ${name}`;
  }
  return `exit code ${code}`;
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
