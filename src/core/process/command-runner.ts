import { execFile, spawn, type ChildProcess } from 'node:child_process';

/** One command to run: no shell, the environment given and nothing else. */
export interface CommandSpec {
  file: string;
  args: string[];
  env: Record<string, string>;
  /** Bytes for its standard input (closed after them, or at once without). */
  input?: Buffer;
  /** Killed (SIGKILL) when it runs longer. */
  timeoutMs: number;
  /** Killed when its standard output or error grows past this. */
  maxBuffer: number;
}

/** How a command ended, as `execFile` reports it. */
export interface CommandResult {
  /** Its exit code; null when it was killed or never started. */
  code: number | null;
  signal: string | null;
  /** Why it did not run or was stopped (`ENOENT`, `ERR_CHILD_PROCESS_STDIO_MAXBUFFER`). */
  errorCode: string | null;
  errorMessage: string | null;
  stdout: Buffer;
  stderr: Buffer;
}

/**
 * The runner: a small Node process that starts commands for this one. A fork copies the page
 * tables of the process that forks, so a spawn costs in proportion to its memory: 15-18 ms from a
 * 300 MB API process against about 2.5 ms from this runner (measured with git on this machine).
 * Frames both ways are a 4-byte big-endian length and a JSON header, then the raw bytes the header
 * counts. It exits when its standard input closes, so it never outlives the process it serves.
 */
const RUNNER_SOURCE = String.raw`
const { execFile } = require('node:child_process');
let pending = Buffer.alloc(0);
let header = null;
function reply(head, stdout, stderr) {
  const h = Buffer.from(JSON.stringify({ ...head, stdoutLength: stdout.length, stderrLength: stderr.length }));
  const size = Buffer.alloc(4);
  size.writeUInt32BE(h.length);
  process.stdout.write(Buffer.concat([size, h, stdout, stderr]));
}
function run(spec, input) {
  const child = execFile(
    spec.file,
    spec.args,
    { env: spec.env, encoding: 'buffer', maxBuffer: spec.maxBuffer, timeout: spec.timeoutMs, killSignal: 'SIGKILL' },
    (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      const errorCode = error && typeof error.code === 'string' ? error.code : null;
      reply(
        { id: spec.id, code, signal: error && error.signal ? error.signal : null, errorCode, errorMessage: errorCode ? error.message : null },
        Buffer.isBuffer(stdout) ? stdout : Buffer.alloc(0),
        Buffer.isBuffer(stderr) ? stderr : Buffer.alloc(0),
      );
    },
  );
  child.stdin.on('error', () => undefined);
  child.stdin.end(input);
}
process.stdin.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  for (;;) {
    if (header === null) {
      if (pending.length < 4) return;
      const size = pending.readUInt32BE(0);
      if (pending.length < 4 + size) return;
      header = JSON.parse(pending.subarray(4, 4 + size).toString('utf8'));
      pending = pending.subarray(4 + size);
    }
    if (pending.length < header.inputLength) return;
    const input = pending.subarray(0, header.inputLength);
    pending = pending.subarray(header.inputLength);
    const spec = header;
    header = null;
    run(spec, Buffer.from(input));
  }
});
process.stdin.on('end', () => process.exit(0));
`;

interface Waiting {
  resolve(result: CommandResult): void;
  reject(error: Error): void;
}

interface ReplyHeader {
  id: number;
  code: number | null;
  signal: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  stdoutLength: number;
  stderrLength: number;
}

/** The runner lost (it died, or could not start): the command may not have run. */
export class RunnerLost extends Error {}

class CommandRunner {
  private child: ChildProcess | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 1;
  /** Bytes received and not yet framed, kept as they came: joined once a frame is whole. */
  private chunks: Buffer[] = [];
  private buffered = 0;
  private header: ReplyHeader | null = null;

  get pid(): number | undefined {
    return this.child?.pid;
  }

  run(spec: CommandSpec): Promise<CommandResult> {
    const child = this.ensure();
    const id = this.nextId++;
    const input = spec.input ?? Buffer.alloc(0);
    const head = Buffer.from(
      JSON.stringify({
        id,
        file: spec.file,
        args: spec.args,
        env: spec.env,
        timeoutMs: spec.timeoutMs,
        maxBuffer: spec.maxBuffer,
        inputLength: input.length,
      }),
    );
    const size = Buffer.alloc(4);
    size.writeUInt32BE(head.length);
    return new Promise<CommandResult>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.holdOpen(true);
      child.stdin!.write(Buffer.concat([size, head, input]));
    });
  }

  private ensure(): ChildProcess {
    if (this.child) return this.child;
    const child = spawn(process.execPath, ['--max-old-space-size=64', '-e', RUNNER_SOURCE], {
      env: {},
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    this.child = child;
    this.chunks = [];
    this.buffered = 0;
    this.header = null;
    child.stdin.on('error', () => undefined);
    child.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
    const lost = (why: string): void => {
      if (this.child !== child) return;
      this.child = null;
      const waiting = [...this.waiting.values()];
      this.waiting.clear();
      for (const w of waiting) w.reject(new RunnerLost(`the command runner ${why}`));
    };
    child.once('error', (error) => lost(`could not start: ${error.message}`));
    child.once('exit', (code, signal) => lost(`ended (${signal ?? `exit code ${code}`})`));
    // An idle runner keeps no process alive; a command in flight does (holdOpen).
    child.unref();
    this.holdOpen(false);
    return child;
  }

  /** Pipes are handles of their own: referenced only while a command waits for its answer. */
  private holdOpen(busy: boolean): void {
    if (!this.child) return;
    for (const pipe of [this.child.stdin, this.child.stdout] as unknown as Array<{
      ref(): void;
      unref(): void;
    }>) {
      if (busy) pipe.ref();
      else pipe.unref();
    }
  }

  private receive(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    for (;;) {
      if (!this.header) {
        if (this.buffered < 4) return;
        const size = this.peek(4).readUInt32BE(0);
        if (this.buffered < 4 + size) return;
        this.header = JSON.parse(
          this.take(4 + size)
            .subarray(4)
            .toString('utf8'),
        ) as ReplyHeader;
      }
      const { id, stdoutLength, stderrLength } = this.header;
      if (this.buffered < stdoutLength + stderrLength) return;
      const body = this.take(stdoutLength + stderrLength);
      const stdout = Buffer.from(body.subarray(0, stdoutLength));
      const stderr = Buffer.from(body.subarray(stdoutLength));
      const { code, signal, errorCode, errorMessage } = this.header;
      this.header = null;
      const waiting = this.waiting.get(id);
      this.waiting.delete(id);
      if (this.waiting.size === 0) this.holdOpen(false);
      waiting?.resolve({ code, signal, errorCode, errorMessage, stdout, stderr });
    }
  }

  /** The first `n` buffered bytes (at least `n` are buffered), left buffered. */
  private peek(n: number): Buffer {
    if (this.chunks[0].length < n) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0];
  }

  /**
   * Removes and returns the first `n` buffered bytes (at least `n` are buffered): joining chunks
   * once per frame, not once per chunk, so a reply of many megabytes costs one copy, not a copy
   * of all it had so far for each chunk of it.
   */
  private take(n: number): Buffer {
    if (n === 0) return Buffer.alloc(0);
    const whole = this.peek(n);
    this.chunks[0] = whole.subarray(n);
    if (this.chunks[0].length === 0) this.chunks.shift();
    this.buffered -= n;
    return whole.subarray(0, n);
  }
}

const runner = new CommandRunner();

/** The runner's process id while it runs (for the process list and the tests). */
export const commandRunnerPid = (): number | undefined => runner.pid;

/**
 * Runs a command through the runner (see RUNNER_SOURCE for why), or, when the runner is lost
 * before the command was answered, directly from this process: a command is never lost to the
 * runner's failure. Callers give commands that are safe to run again (git plumbing is).
 */
export async function runCommand(spec: CommandSpec): Promise<CommandResult> {
  try {
    return await runner.run(spec);
  } catch (error) {
    if (!(error instanceof RunnerLost)) throw error;
    return runDirectly(spec);
  }
}

function runDirectly(spec: CommandSpec): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = execFile(
      spec.file,
      spec.args,
      {
        env: spec.env,
        encoding: 'buffer',
        maxBuffer: spec.maxBuffer,
        timeout: spec.timeoutMs,
        killSignal: 'SIGKILL',
      },
      (error, stdout, stderr) => {
        const errorCode = error && typeof error.code === 'string' ? error.code : null;
        resolve({
          code: error ? (typeof error.code === 'number' ? error.code : null) : 0,
          signal: error?.signal ?? null,
          errorCode,
          errorMessage: errorCode ? error!.message : null,
          stdout,
          stderr,
        });
      },
    );
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(spec.input);
  });
}
