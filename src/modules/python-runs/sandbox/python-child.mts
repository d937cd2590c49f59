/**
 * The Python child: one process per run, started warm by PythonSandbox (python-sandbox.ts) inside
 * bubblewrap. It loads Pyodide, says it is ready, reads one job, runs it, answers and exits,
 * through the sandbox's channel (src/core/sandbox/child-channel.mts, protocol.ts there). What the
 * job and the answer hold is in this directory's protocol.ts.
 *
 * The code it runs is untrusted and Pyodide does not contain it: Python reaches this process
 * through the JS bridge (`to_js([1]).constructor.constructor('return process')()`), so whatever
 * this process can do, the code can. The sandbox around it is the boundary, not this file.
 *
 * A `.mts` file so that its build is a `.mjs`: the sandbox holds no package.json to say that a
 * `.js` is a module. It imports no value from the project but the channel and the driver
 * (python-driver.mts), `.mjs` files too.
 *
 * argv: <Pyodide's directory, with a trailing slash> [--snapshot=<file>: start from this memory
 * snapshot of a prepared Pyodide (python-snapshot.mts) rather than load it] [--pool=<tag>, ignored:
 * it names the pool in the process list].
 */
import fs from 'node:fs';
import type { PyodideAPI } from 'pyodide';
import { openChannel } from '../../../core/sandbox/child-channel.mjs';
import { loadPython } from './python-driver.mjs';
import type { JobHeader, PythonAnswer } from './protocol.js';

// First: the channel takes its references before anything else runs.
const channel = openChannel();

/** Captures a stream's bytes up to a cap; past it, counts nothing and remembers it was cut. */
class Capture {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  write(bytes: Uint8Array): number {
    const room = this.limit - this.size;
    if (room > 0) {
      const part = bytes.slice(0, room);
      this.chunks.push(part);
      this.size += part.length;
    }
    if (bytes.length > room) this.truncated = true;
    return bytes.length;
  }

  text(): string {
    // A cut inside a character leaves a replacement character, not an error.
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** The job after its nonce: a header line, then the rows as JSON. */
function parseJob(input: Buffer): { header: JobHeader; rowsJson: string } {
  const newline = input.indexOf(10);
  if (newline < 0) throw new Error('the job has no header line');
  const header = JSON.parse(input.subarray(0, newline).toString('utf8')) as JobHeader;
  return { header, rowsJson: input.subarray(newline + 1).toString('utf8') };
}

async function run(pyodide: PyodideAPI, header: JobHeader, rowsJson: string): Promise<PythonAnswer> {
  const stdout = new Capture(header.limits.maxStdoutBytes);
  const stderr = new Capture(header.limits.maxStderrBytes);
  pyodide.setStdout({ write: (bytes: Uint8Array) => stdout.write(bytes) });
  pyodide.setStderr({ write: (bytes: Uint8Array) => stderr.write(bytes) });
  let answer: { executionError?: string; outputJson?: string };
  try {
    const driver = pyodide.globals.get('_run') as (
      code: string,
      rows: string,
      maxOutput: number,
    ) => Promise<string>;
    answer = JSON.parse(await driver(header.code, rowsJson, header.limits.maxOutputBytes)) as typeof answer;
  } catch (error) {
    // The driver itself failed: the interpreter is broken (Pyodide's fatal error) or out of memory.
    const lines = String((error as Error)?.message ?? error)
      .trim()
      .split('\n');
    answer = { executionError: lines[lines.length - 1] || 'The Python runtime failed' };
  }
  const result: PythonAnswer = { stdout: stdout.text(), stderr: stderr.text() };
  if (stdout.truncated) result.stdoutTruncated = true;
  if (stderr.truncated) result.stderrTruncated = true;
  if (answer.executionError !== undefined) result.executionError = answer.executionError;
  else if (answer.outputJson !== undefined) result.outputData = JSON.parse(answer.outputJson);
  return result;
}

async function main(): Promise<void> {
  const indexURL = process.argv[2];
  if (!indexURL) throw new Error("usage: python-child.mjs <Pyodide's directory> [--snapshot=<file>]");
  const snapshotArg = process.argv.find((arg) => arg.startsWith('--snapshot='));
  const snapshot = snapshotArg ? fs.readFileSync(snapshotArg.slice('--snapshot='.length)) : null;
  const pyodide = await loadPython(indexURL, snapshot);
  // `input()` meets the end of input rather than this process's standard input (the job).
  pyodide.setStdin({ stdin: () => null });
  channel.ready();
  const { header, rowsJson } = parseJob((await channel.job()).body);
  channel.answer(await run(pyodide, header, rowsJson));
}

await main();
