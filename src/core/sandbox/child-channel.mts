/**
 * The child's side of the sandbox protocol (protocol.ts), shared by every sandboxed child
 * (python-child.mts, compile-child.mts). Bound into the sandbox beside them, at the same relative
 * path as in the build, so they import it as `../../../core/sandbox/child-channel.mjs`.
 *
 * A `.mts` file so that its build is a `.mjs`: the sandbox holds no package.json to say that a
 * `.js` is a module. It imports nothing of the project (only Node's built-ins).
 *
 * {@link openChannel} must run at the child's start, before any untrusted code: it takes the
 * references it writes with then, so code that later replaces `JSON.stringify`, `fs.writeSync` or
 * `process.exit` cannot see or forge an answer. The nonce lives in a closure only, and is written
 * by string concatenation, never as a property of an object the job's code could be handed.
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import v8 from 'node:v8';

/** protocol.ts RESULT_FD (a child imports no value from the project's CommonJS build). */
const RESULT_FD = 3;
const NONCE = /^[0-9a-f]{32}$/;

export interface Job {
  /** The job as the kind defines it: what followed the nonce line. */
  body: Buffer;
}

export interface Channel {
  /** Says the child is ready; call once everything the job needs is loaded. */
  ready(): void;
  /** Reads the job (standard input, to its end); its nonce stays here. */
  job(): Promise<Job>;
  /** Writes the answer (a JSON value) with the job's nonce, then exits. */
  answer(payload: unknown): never;
}

/**
 * A heap snapshot (or V8 flags that open natives syntax) would show the job's code every string
 * of this process, the nonce included: refused once the channel is open.
 */
function closeIntrospection(): void {
  const refuse = (): never => {
    throw new Error('Not available in the sandbox');
  };
  for (const name of ['getHeapSnapshot', 'writeHeapSnapshot', 'setFlagsFromString'] as const) {
    Object.defineProperty(v8, name, { value: refuse, writable: false, configurable: false });
  }
  // `import('node:v8')` gives the same functions.
  syncBuiltinESMExports();
}

export function openChannel(): Channel {
  // Taken now, before any untrusted code runs.
  const writeSync = fs.writeSync;
  const stringify = JSON.stringify;
  const reallyExit = (process as unknown as { reallyExit: (code: number) => never }).reallyExit.bind(process);
  const stdin = process.stdin;
  const concat = Buffer.concat.bind(Buffer);
  const bytesOf = Buffer.from.bind(Buffer);
  let nonce: string | null = null;
  let read = false;
  closeIntrospection();

  /** A blocking write of the whole text (the pipe may take it in pieces). */
  const writeAll = (text: string): void => {
    let offset = 0;
    const bytes = bytesOf(text, 'utf8');
    while (offset < bytes.length) {
      try {
        offset += writeSync(RESULT_FD, bytes, offset);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      }
    }
  };

  return {
    ready() {
      writeAll('{"type":"ready"}\n');
    },
    async job() {
      if (read) throw new Error('a child takes one job');
      read = true;
      const chunks: Buffer[] = [];
      for await (const chunk of stdin) chunks.push(chunk as Buffer);
      const input = concat(chunks);
      const newline = input.indexOf(10);
      const line = newline < 0 ? '' : input.subarray(0, newline).toString('latin1');
      if (!NONCE.test(line)) throw new Error('the job has no nonce line');
      nonce = line;
      return { body: input.subarray(newline + 1) };
    },
    answer(payload: unknown) {
      if (nonce === null) throw new Error('no job to answer');
      const json = stringify(payload) ?? 'null';
      writeAll('{"type":"result","nonce":"' + nonce + '","payload":' + json + '}\n');
      // At once, with the reference taken at start: the job may have left timers, sockets,
      // threads or 'exit' handlers behind. The parent kills the child once it has its answer anyway.
      return reallyExit(0);
    },
  };
}
