import { spawn, type ChildProcess } from 'node:child_process';
import { gitEnv, GitError } from '../../../core/git/git.js';

/** A kept command ends after this long without a request. */
const IDLE_MS = 30_000;
/** A request not answered within this is a hung command: it is killed. */
const ANSWER_TIMEOUT_MS = 60_000;
/** At most this many repositories keep commands at once; the least recently used are ended. */
const MAX_REPOSITORIES = 16;

/** The plumbing commands that answer one request after another on their standard streams. */
export type BatchKind = 'blobs' | 'commits' | 'trees' | 'refs';

const ARGS: Record<BatchKind, string[]> = {
  // One path per line (a file holding the blob), one object id per line.
  blobs: ['hash-object', '-w', '--no-filters', '--stdin-paths'],
  // The same for commit objects (their text made by GitStore.commit, as commit-tree makes it).
  commits: ['hash-object', '-t', 'commit', '-w', '--no-filters', '--stdin-paths'],
  // Trees as `mktree -z` input, each ended by an empty entry; one tree id per tree.
  trees: ['mktree', '--batch', '-z'],
  // Transactions (`start`, `update`/`create`/`delete`, `prepare`, `commit`), one answer line each
  // for start, prepare and commit; a refused update (a lost compare-and-swap) ends the command.
  refs: ['update-ref', '--stdin'],
};

interface Request {
  input: string;
  lines: number;
  resolve(lines: string[]): void;
  reject(error: GitError): void;
}

/**
 * One long-lived git command of one repository. Requests go one at a time (the next is written
 * once the last is answered), so a request that makes git fail (and end) fails alone.
 */
class BatchCommand {
  private readonly child: ChildProcess;
  private readonly queue: Request[] = [];
  private current: Request | null = null;
  private received: string[] = [];
  private pending = '';
  private stderr = '';
  private timer?: NodeJS.Timeout;
  private idle?: NodeJS.Timeout;
  ended = false;

  constructor(
    gitDir: string,
    private readonly kind: BatchKind,
    private readonly onEnd: () => void,
  ) {
    this.child = spawn('git', [`--git-dir=${gitDir}`, ...ARGS[kind]], {
      env: gitEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child.stdin!.on('error', () => undefined);
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (chunk: string) => this.receive(chunk));
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-4000);
    });
    this.child.once('error', (error) =>
      this.end(null, `${(error as NodeJS.ErrnoException).code}: ${error.message}`),
    );
    this.child.once('close', (code) => this.end(code, this.stderr));
    this.hold(false);
  }

  send(input: string, lines: number): Promise<string[]> {
    return new Promise((resolve, reject) => {
      if (this.ended) return reject(new GitError(ARGS[this.kind], null, 'the command has ended'));
      this.queue.push({ input, lines, resolve, reject });
      this.next();
    });
  }

  /** Ends the command: its standard input closes, so git exits once done. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.idle);
    this.child.stdin!.end();
  }

  kill(): void {
    this.ended = true;
    this.child.kill('SIGKILL');
  }

  private next(): void {
    if (this.current || this.ended) return;
    const request = this.queue.shift();
    if (!request) {
      this.hold(false);
      clearTimeout(this.idle);
      this.idle = setTimeout(() => this.close(), IDLE_MS);
      this.idle.unref();
      return;
    }
    clearTimeout(this.idle);
    this.hold(true);
    this.current = request;
    this.received = [];
    this.timer = setTimeout(() => this.kill(), ANSWER_TIMEOUT_MS);
    this.child.stdin!.write(request.input);
  }

  private receive(chunk: string): void {
    this.pending += chunk;
    let newline: number;
    while ((newline = this.pending.indexOf('\n')) >= 0) {
      this.received.push(this.pending.slice(0, newline));
      this.pending = this.pending.slice(newline + 1);
      const request = this.current;
      if (request && this.received.length === request.lines) {
        clearTimeout(this.timer);
        this.current = null;
        request.resolve(this.received);
        this.next();
      }
    }
  }

  private end(code: number | null, why: string): void {
    clearTimeout(this.timer);
    clearTimeout(this.idle);
    const wasEnded = this.ended;
    this.ended = true;
    const failed = [...(this.current ? [this.current] : []), ...this.queue.splice(0)];
    this.current = null;
    const error = new GitError(
      ARGS[this.kind],
      code,
      why.trim() || (wasEnded ? 'ended' : 'ended unexpectedly'),
    );
    for (const request of failed) request.reject(error);
    this.onEnd();
  }

  /** Its pipes keep this process alive only while a request waits for its answer. */
  private hold(busy: boolean): void {
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr] as unknown as Array<{
      ref(): void;
      unref(): void;
    }>) {
      if (busy) stream.ref();
      else stream.unref();
    }
    if (busy) this.child.ref();
    else this.child.unref();
  }
}

/**
 * Long-lived plumbing commands per repository, for the hot writes: a file write stores a blob,
 * writes trees and moves a ref, and a git process started from the API costs several
 * milliseconds each time (see core/process), where a kept command answers in a fraction of one.
 * Each kind runs at most once per repository; a command ends after {@link IDLE_MS} unused, when
 * it fails (the next request starts another), or when its repository goes.
 */
export class GitSessions {
  private readonly commands = new Map<string, Map<BatchKind, BatchCommand>>();

  /** The answer lines of one request, from the repository's command of that kind. */
  request(gitDir: string, kind: BatchKind, input: string, lines: number): Promise<string[]> {
    let byKind = this.commands.get(gitDir);
    if (byKind) {
      // Most recently used last.
      this.commands.delete(gitDir);
      this.commands.set(gitDir, byKind);
    } else {
      byKind = new Map();
      this.commands.set(gitDir, byKind);
      for (const [dir, old] of this.commands) {
        if (this.commands.size <= MAX_REPOSITORIES) break;
        this.commands.delete(dir);
        for (const command of old.values()) command.close();
      }
    }
    let command = byKind.get(kind);
    if (!command || command.ended) {
      const made: BatchCommand = new BatchCommand(gitDir, kind, () => {
        if (this.commands.get(gitDir)?.get(kind) === made) this.commands.get(gitDir)!.delete(kind);
      });
      command = made;
      byKind.set(kind, command);
    }
    return command.send(input, lines);
  }

  /** Ends the commands of a repository (it is about to be deleted). */
  forget(gitDir: string): void {
    for (const command of this.commands.get(gitDir)?.values() ?? []) command.kill();
    this.commands.delete(gitDir);
  }

  closeAll(): void {
    for (const byKind of this.commands.values()) for (const command of byKind.values()) command.kill();
    this.commands.clear();
  }
}
