import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { NONCE_BYTES, RESULT_FD, SECCOMP_FD } from './protocol.js';

/**
 * How a job on one child ended, before the kind turns it into its result. Only `answer` is the
 * child's verdict: a result message carrying the job's nonce. Everything else is the sandbox
 * stopping the job (or the job ending itself), whatever exit code or message it left.
 */
export type ChildOutcome =
  | { kind: 'answer'; payload: unknown }
  | { kind: 'timeout' }
  | { kind: 'too_large' }
  | { kind: 'invalid' }
  | { kind: 'ended'; code: number | null; signal: NodeJS.Signals | null; stderr: string };

export interface ChildHooks {
  /** It loaded what it needs and waits for its job. */
  ready(child: SandboxChildProcess): void;
  /** It ended (or was stopped) before it was ready. */
  failed(child: SandboxChildProcess, reason: string): void;
  /** It ended while it waited for a job. */
  lost(child: SandboxChildProcess): void;
  /** It ended, whatever its state: the process and its pipes are gone. */
  closed(child: SandboxChildProcess): void;
}

export interface ChildSpawn {
  file: string;
  args: string[];
  seccomp: Buffer;
  /** From the spawn to the ready message. */
  readyTimeoutMs: number;
  /** The most the child may write on RESULT_FD for its answer. */
  maxAnswerBytes: number;
}

/** The ready message is small: more before it is not the child speaking. */
const MAX_READY_BYTES = 4096;
const STDERR_TAIL = 8192;

/**
 * One warm, single-use child: started at once, `ready` once it has loaded what it needs, then
 * given one job by {@link send}, whose kill timer starts then. Whatever the child writes is
 * untrusted once the job is sent: bounded here, taken only with the job's nonce, and checked again
 * by the kind.
 */
export class SandboxChildProcess {
  state: 'starting' | 'ready' | 'running' | 'ended' = 'starting';
  readonly startedAt = performance.now();
  readyAt?: number;
  private readonly process: ChildProcess;
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private received = 0;
  private stderr = '';
  private readyTimer?: NodeJS.Timeout;
  private runTimer?: NodeJS.Timeout;
  private settle?: (outcome: ChildOutcome) => void;
  private timedOut = false;
  private tooLarge = false;
  private failure?: string;
  private nonce?: string;
  private readonly maxAnswerBytes: number;

  constructor(
    spawnSpec: ChildSpawn,
    private readonly hooks: ChildHooks,
  ) {
    this.maxAnswerBytes = spawnSpec.maxAnswerBytes;
    this.process = spawn(spawnSpec.file, spawnSpec.args, {
      env: {},
      stdio: ['pipe', 'ignore', 'pipe', 'pipe', 'pipe'],
    });
    this.readyTimer = setTimeout(() => {
      this.failure ??= `not ready within ${spawnSpec.readyTimeoutMs} ms`;
      this.kill();
    }, spawnSpec.readyTimeoutMs);
    this.process.once('error', (error) => {
      // Not started at all (ENOENT, EAGAIN): 'close' follows.
      this.failure ??= `could not be started: ${error.message}`;
    });
    this.process.stdin?.on('error', () => undefined); // EPIPE when it dies before reading its job
    this.process.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    const seccomp = this.process.stdio[SECCOMP_FD] as Writable | null;
    seccomp?.on('error', () => undefined);
    seccomp?.end(spawnSpec.seccomp);
    const answers = this.process.stdio[RESULT_FD] as Readable | null;
    answers?.on('error', () => undefined);
    answers?.on('data', (chunk: Buffer) => this.receive(chunk));
    this.process.once('close', (code, signal) => this.ended(code, signal));
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  /** Sends the job and starts the kill timer; resolves once the child answered or ended. */
  send(job: Buffer, timeoutMs: number): Promise<ChildOutcome> {
    if (this.state !== 'ready') throw new Error(`a ${this.state} child cannot take a job`);
    this.state = 'running';
    this.received = 0;
    this.nonce = randomBytes(NONCE_BYTES).toString('hex');
    const input = Buffer.concat([Buffer.from(`${this.nonce}\n`), job]);
    return new Promise((resolve) => {
      this.settle = resolve;
      this.runTimer = setTimeout(() => {
        this.timedOut = true;
        this.kill();
      }, timeoutMs);
      this.process.stdin?.end(input);
    });
  }

  kill(): void {
    const pid = this.process.pid;
    if (pid === undefined || this.process.exitCode !== null || this.process.signalCode !== null) return;
    // bwrap's --die-with-parent misses a sandbox whose bwrap is killed while it starts (its child
    // sets the parent-death signal after the parent is gone: bubblewrap#633), and an orphan would
    // keep running and hold our pipes. So: freeze bwrap (it starts nothing more), kill what it
    // started (the sandbox's init: the kernel then ends every process of its PID namespace), then
    // bwrap itself.
    signal(pid, 'SIGSTOP');
    for (const descendant of descendantsOf(pid)) signal(descendant, 'SIGKILL');
    this.process.kill('SIGKILL');
  }

  private receive(chunk: Buffer): void {
    this.received += chunk.length;
    if (this.state === 'starting' && this.received > MAX_READY_BYTES) {
      this.failure = 'wrote more than a ready message';
      return this.kill();
    }
    if (this.state === 'running' && this.received > this.maxAnswerBytes) {
      this.tooLarge = true;
      this.pending = '';
      return this.kill();
    }
    if (this.state === 'ended' || this.tooLarge) return;
    this.pending += this.decoder.write(chunk);
    let newline: number;
    while ((newline = this.pending.indexOf('\n')) >= 0) {
      const line = this.pending.slice(0, newline);
      this.pending = this.pending.slice(newline + 1);
      this.message(line);
    }
  }

  private message(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      message = undefined;
    }
    if (this.state === 'starting') {
      if ((message as { type?: unknown } | null | undefined)?.type !== 'ready') {
        this.failure = 'said something other than ready';
        return this.kill();
      }
      clearTimeout(this.readyTimer);
      this.state = 'ready';
      this.readyAt = performance.now();
      this.hooks.ready(this);
    } else if (this.state === 'running' && this.settle) {
      // One message per job: a result with this job's nonce, or the job failed. Either way the
      // child has done its work, whatever it would do next.
      const { type, nonce, payload } = (message ?? {}) as Record<string, unknown>;
      const answered = type === 'result' && typeof nonce === 'string' && nonce === this.nonce;
      this.finish(answered ? { kind: 'answer', payload } : { kind: 'invalid' });
      this.kill();
    }
  }

  private finish(outcome: ChildOutcome): void {
    clearTimeout(this.runTimer);
    const settle = this.settle;
    this.settle = undefined;
    settle?.(outcome);
  }

  private ended(code: number | null, signal: NodeJS.Signals | null): void {
    clearTimeout(this.readyTimer);
    clearTimeout(this.runTimer);
    const was = this.state;
    this.state = 'ended';
    if (was === 'starting') {
      const said = startFailure(this.stderr);
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      this.hooks.failed(this, this.failure ?? `ended before it was ready (${how})${said ? `: ${said}` : ''}`);
    } else if (was === 'ready') {
      this.hooks.lost(this);
    } else if (was === 'running') {
      if (this.timedOut) this.finish({ kind: 'timeout' });
      else if (this.tooLarge) this.finish({ kind: 'too_large' });
      else this.finish({ kind: 'ended', code, signal, stderr: this.stderr });
    }
    this.hooks.closed(this);
  }

  /** The tail of what the child wrote on its standard error, for the log. */
  stderrTail(): string {
    return this.stderr;
  }
}

/** Sends a signal, if the process is still there. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone already
  }
}

/** The processes below `pid`, from /proc (children of each thread), nearest first. */
function descendantsOf(pid: number): number[] {
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    let tasks: string[];
    try {
      tasks = fs.readdirSync(`/proc/${parent}/task`);
    } catch {
      continue;
    }
    for (const task of tasks) {
      let children = '';
      try {
        children = fs.readFileSync(`/proc/${parent}/task/${task}/children`, 'utf8');
      } catch {
        // the thread ended meanwhile
      }
      for (const child of children.split(' ').filter(Boolean).map(Number)) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

/**
 * What a child that died starting said, in one line: a fatal error's own line (V8's "Fatal process
 * out of memory: ...", "Fatal JavaScript ..." or an Error), which comes before a native stack
 * trace, else its last three lines.
 */
export function startFailure(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.replace(/^#\s*/, '').trim())
    .filter(Boolean);
  const fatal = lines.find((line) => /^(Fatal|FATAL|\w*Error\b)/.test(line));
  return fatal ?? lines.slice(-3).join(' | ');
}
