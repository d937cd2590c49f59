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
 * `.js` is a module. It imports no value from the project but the channel (an `.mjs` too).
 *
 * argv: <Pyodide's directory, with a trailing slash> [--pool=<tag>, ignored: it names the pool
 * in the process list].
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PyodideAPI } from 'pyodide';
import { openChannel } from '../../../core/sandbox/child-channel.mjs';
import type { JobHeader, PythonAnswer } from './protocol.js';

// First: the channel takes its references before anything else runs.
const channel = openChannel();

/**
 * The driver: runs the code in a fresh namespace with `rows`, formats its exception, and turns
 * its `output` into JSON. Compiled at warm-up, so a run pays only for the code itself.
 */
const DRIVER = String.raw`
import ast, builtins, datetime, decimal, json, linecache, math, sys, traceback

_SOURCE = '<report>'


def _error_line(e):
    t = type(e)
    name = t.__qualname__ if t.__module__ in ('builtins', '__main__') else f'{t.__module__}.{t.__qualname__}'
    if isinstance(e, ModuleNotFoundError) and e.name:
        return f"ModuleNotFoundError: No module named '{e.name}' (only the Python standard library is available)"
    if isinstance(e, SyntaxError):
        where = f' (line {e.lineno})' if e.lineno else ''
        return f'{name}: {e.msg}{where}'
    try:
        text = str(e)
    except BaseException:
        text = ''
    return f'{name}: {text}' if text else name


def _report(e):
    tb = e.__traceback__
    # Leave out the driver's own frames: the traceback starts in the code.
    while tb is not None and tb.tb_frame.f_code.co_filename != _SOURCE:
        tb = tb.tb_next
    try:
        if isinstance(e, SyntaxError):
            sys.stderr.write(''.join(traceback.format_exception_only(type(e), e)))
        else:
            sys.stderr.write(''.join(traceback.format_exception(type(e), e, tb)))
    except BaseException:
        pass
    e.__traceback__ = None
    return _error_line(e)


def _plain(value, depth=0):
    if depth > 100:
        raise ValueError('output is nested more than 100 levels deep')
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        plain = {}
        for k, v in value.items():
            if not (k is None or isinstance(k, (str, int, float, bool))):
                raise TypeError(f'output has a key of type {type(k).__name__}; keys must be strings or numbers')
            plain[k] = _plain(v, depth + 1)
        return plain
    if isinstance(value, (list, tuple)):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, (set, frozenset)):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return _plain(float(value), depth + 1)
    raise TypeError(f'output holds a value of type {type(value).__name__}, which has no JSON form')


async def _run(code, rows_json, max_output_bytes):
    answer = {}
    scope = {'__name__': '__main__', '__builtins__': builtins}
    try:
        scope['rows'] = json.loads(rows_json)
        del rows_json
        linecache.cache[_SOURCE] = (len(code), None, code.splitlines(True), _SOURCE)
        compiled = compile(code, _SOURCE, 'exec', flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
        pending = eval(compiled, scope)
        if pending is not None:
            await pending
    except SystemExit as e:
        if e.code not in (None, 0):
            scope.clear()
            answer['executionError'] = f'SystemExit: {e.code}'
    except BaseException as e:
        # Free what the code held first: after a MemoryError, the report needs memory too.
        scope.clear()
        answer['executionError'] = _report(e)
    if 'executionError' not in answer and 'output' in scope:
        try:
            text = json.dumps(_plain(scope['output']), allow_nan=False, ensure_ascii=False, separators=(',', ':'))
            if len(text.encode()) > max_output_bytes:
                raise ValueError(f'output takes more than {max_output_bytes} bytes as JSON')
            answer['outputJson'] = text
        except BaseException as e:
            answer['executionError'] = _report(e)
    scope.clear()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    return json.dumps(answer)
`;

/**
 * Modules loaded at warm-up, so that the first import in a run does not unpack them: the ones a
 * report's code is likely to use.
 */
const PRELOAD =
  'import asyncio, collections, csv, functools, io, itertools, operator, random, re, statistics, string';

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

async function load(indexURL: string): Promise<PyodideAPI> {
  const entry = pathToFileURL(path.join(indexURL, 'pyodide.mjs')).href;
  const { loadPyodide } = (await import(entry)) as typeof import('pyodide');
  const pyodide = await loadPyodide({
    indexURL,
    env: { HOME: '/home/pyodide' },
    // Until a job sets its captures, anything printed is dropped.
    stdout: () => undefined,
    stderr: () => undefined,
  });
  // `input()` meets the end of input rather than this process's standard input (the job).
  pyodide.setStdin({ stdin: () => null });
  pyodide.runPython(DRIVER);
  pyodide.runPython(PRELOAD);
  return pyodide;
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
  if (!indexURL) throw new Error("usage: python-child.mjs <Pyodide's directory>");
  const pyodide = await load(indexURL);
  channel.ready();
  const { header, rowsJson } = parseJob((await channel.job()).body);
  channel.answer(await run(pyodide, header, rowsJson));
}

await main();
