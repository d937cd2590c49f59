import { spawn, type ChildProcess } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import type { Logger } from '@nestjs/common';
import { git, gitEnv, redact } from '../../../core/git/git.js';
import type { FetchBody } from './fetch-request.js';
import { gitHttpError } from './git-http.errors.js';
import { pktLine, PktLineError, WantSectionReader, type WantSection } from './pkt-line.js';
import { configEnv, type GitConfigEntry } from './served-refs.js';

export const UPLOAD_PACK_RESULT = 'application/x-git-upload-pack-result';

/**
 * What every run of upload-pack is held to, whatever a repository's own configuration says
 * (command-line configuration comes last, and wins):
 * - one packing thread and bounded pack memory (git's defaults let one clone take gigabytes);
 * - only advertised tips, or commits they reach (which stateless RPC must allow: refs may move
 *   between the advertisement and the fetch), may be wanted; no filters (partial clones fetch
 *   single objects later, by id).
 */
const BOUNDS: GitConfigEntry[] = [
  ['pack.threads', '1'],
  ['pack.windowMemory', '64m'],
  ['pack.deltaCacheSize', '16m'],
  ['core.deltaBaseCacheLimit', '16m'],
  ['core.packedGitLimit', '256m'],
  ['uploadpack.allowTipSHA1InWant', 'false'],
  ['uploadpack.allowReachableSHA1InWant', 'false'],
  ['uploadpack.allowAnySHA1InWant', 'false'],
  ['uploadpack.allowFilter', 'false'],
];

/**
 * The environment of upload-pack: git's fixed one, the bounds and the served refs. No
 * `GIT_PROTOCOL`: the protocol is v0 whatever the client asks (git takes it), the one whose check
 * of wants, against the refs upload-pack advertises itself, this service relies on and tests.
 */
const uploadPackEnv = (served: readonly GitConfigEntry[]) => ({
  ...gitEnv(),
  ...configEnv([...BOUNDS, ...served]),
});

/**
 * The refs advertisement of `git upload-pack --stateless-rpc --advertise-refs`: a line per served
 * ref, small enough to hold, so it runs as one-shot commands do (core/git).
 */
export async function advertiseRefs(
  dir: string,
  served: readonly GitConfigEntry[],
  timeoutMs: number,
): Promise<Buffer> {
  const result = await git(dir, ['upload-pack', '--stateless-rpc', '--advertise-refs', dir], {
    env: configEnv([...BOUNDS, ...served]),
    timeoutMs,
  });
  return result.stdout;
}

export interface UploadPackRequest {
  /** The bare repository. */
  dir: string;
  served: readonly GitConfigEntry[];
  body: FetchBody;
  res: ServerResponse;
  /** From now to the last byte of the answer. */
  timeoutMs: number;
  /**
   * Why the request's first section may not be served (the text of the `ERR` line upload-pack
   * would answer), or null: checked before upload-pack reads any of it.
   */
  refusal(section: WantSection): Promise<string | null>;
}

/** The client closed the connection: nothing is left to answer. */
class ClientGone extends Error {}

/**
 * One POST of a fetch, answered by `git upload-pack --stateless-rpc`: the body's first section is
 * read and checked, then the body streamed to upload-pack's standard input and its standard output
 * to the response, with backpressure both ways (nothing is held whole). upload-pack and the
 * `pack-objects` it starts run in a process group of their own, killed whole (SIGKILL) when the
 * deadline passes, the client goes, the body fails (too large, not gzip) or the service stops.
 */
export class UploadPackRun {
  private child: ChildProcess | null = null;
  private stopped: Error | null = null;
  private stderr = '';

  constructor(
    private readonly request: UploadPackRequest,
    private readonly logger: Logger,
  ) {}

  /**
   * Resolves once the answer ended, or was cut (a failure after its first byte is logged). Rejects,
   * before any byte of the answer went out, with what to answer instead.
   */
  async serve(): Promise<void> {
    const { res, body, timeoutMs } = this.request;
    const timer = setTimeout(
      () =>
        this.stop(
          gitHttpError('git_fetch_timeout', `The git request did not end within ${timeoutMs} ms; retry`),
        ),
      timeoutMs,
    );
    const gone = () => {
      if (!res.writableFinished) this.stop(new ClientGone());
    };
    res.once('close', gone);
    try {
      const section = await this.readSection();
      const refusal = await this.request.refusal(section);
      if (this.stopped) throw this.stopped;
      if (refusal !== null) return this.refuse(refusal);
      await this.pack(section.received);
    } catch (err) {
      const why = this.stopped ?? err;
      if (why instanceof ClientGone) return;
      if (!res.headersSent) {
        // The rest of the body is left unread.
        res.setHeader('Connection', 'close');
        throw why;
      }
      this.logger.warn(`git fetch cut after its answer started: ${(why as Error).message}`);
      res.destroy();
    } finally {
      clearTimeout(timer);
      res.off('close', gone);
      body.stop();
      this.kill();
    }
  }

  /** Ends the run from outside: upload-pack is killed and the run settles with `reason`. */
  stop(reason: Error): void {
    this.stopped ??= reason;
    this.request.body.chunks.destroy(reason);
    this.kill();
  }

  /** Reads the body up to the end of its first section, which upload-pack has not seen yet. */
  private readSection(): Promise<WantSection> {
    const { chunks } = this.request.body;
    const reader = new WantSectionReader();
    return new Promise((resolve, reject) => {
      const settle = (outcome: () => void) => {
        chunks.off('data', onData).off('end', onEnd).off('error', reject);
        chunks.pause();
        outcome();
      };
      const onData = (chunk: Buffer) => {
        try {
          const section = reader.push(chunk);
          if (section) settle(() => resolve(section));
        } catch (err) {
          settle(() => reject(malformed(err)));
        }
      };
      const onEnd = () =>
        settle(() =>
          reject(gitHttpError('validation_failed', ['The request body ended before its first flush-pkt'])),
        );
      chunks.on('data', onData).once('end', onEnd).once('error', reject);
    });
  }

  /** Answers as upload-pack does when it refuses a request: `ERR <message>`, then nothing. */
  private refuse(message: string): void {
    this.request.res
      .writeHead(200, { ...RESULT_HEADERS, Connection: 'close' })
      .end(pktLine(`ERR ${message}\n`));
  }

  /** Runs upload-pack on the body (its first section already read) and streams its answer. */
  private pack(received: Buffer): Promise<void> {
    const { dir, served, body, res } = this.request;
    const child = spawn('git', ['upload-pack', '--stateless-rpc', dir], {
      env: uploadPackEnv(served),
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    return new Promise((resolve, reject) => {
      child.once('error', reject);
      child.stderr.on('data', (chunk: Buffer) => {
        this.stderr = (this.stderr + chunk.toString('utf8')).slice(-4000);
      });
      // upload-pack may stop reading early (it refused a want); its exit tells.
      child.stdin.on('error', () => undefined);
      child.stdin.write(received);
      body.chunks.once('error', (err) => this.stop(err));
      if (body.chunks.readableEnded) child.stdin.end();
      else body.chunks.pipe(child.stdin);
      // The headers go with the first byte, so a failure before it can still answer an error.
      child.stdout.once('data', () => {
        if (!res.headersSent) res.writeHead(200, RESULT_HEADERS);
      });
      child.stdout.pipe(res, { end: false });
      child.once('close', (code, signal) => {
        if (this.stopped) return reject(this.stopped);
        if (code !== 0 && !res.headersSent) {
          return reject(
            new Error(`git upload-pack failed (${code ?? signal}): ${redact(this.stderr.trim())}`),
          );
        }
        if (!res.headersSent) res.writeHead(200, RESULT_HEADERS);
        // Not waiting for the client to read the rest: git is done, and the slot with it.
        res.end();
        resolve();
      });
    });
  }

  private kill(): void {
    const child = this.child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

const RESULT_HEADERS = { 'Content-Type': UPLOAD_PACK_RESULT, 'Cache-Control': 'no-cache' };

/** A body that is not pkt-lines is the client's: 400. */
const malformed = (err: unknown): Error =>
  err instanceof PktLineError ? gitHttpError('validation_failed', [err.message]) : (err as Error);
