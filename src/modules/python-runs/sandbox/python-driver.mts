/**
 * What a Python child runs before any job: Pyodide loaded, the driver compiled and the common
 * modules imported. Imported by the child (python-child.mts, inside the sandbox) and by the
 * snapshot maker (python-snapshot.mts, which only runs this, never a job's code). Imports nothing.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { PyodideAPI } from 'pyodide';

/**
 * The driver: runs the code in a fresh namespace with `rows`, formats its exception, and turns
 * its `output` into JSON. Compiled at warm-up, so a run pays only for the code itself.
 */
export const DRIVER = String.raw`
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
export const PRELOAD =
  'import asyncio, collections, csv, functools, io, itertools, operator, random, re, statistics, string';

/** Pyodide's options for a child and for the snapshot maker: the same, so the state is the same. */
const BASE = {
  env: { HOME: '/home/pyodide' },
  // Until a job sets its captures, anything printed is dropped.
  stdout: () => undefined,
  stderr: () => undefined,
};

async function loader(indexURL: string): Promise<typeof import('pyodide').loadPyodide> {
  const entry = pathToFileURL(path.join(indexURL, 'pyodide.mjs')).href;
  return ((await import(entry)) as typeof import('pyodide')).loadPyodide;
}

/**
 * Pyodide ready for a job: from a memory snapshot of {@link prepared} (a third of a second), or
 * loaded and prepared here (two seconds and more).
 */
export async function loadPython(indexURL: string, snapshot: Uint8Array | null): Promise<PyodideAPI> {
  const loadPyodide = await loader(indexURL);
  if (snapshot) return loadPyodide({ ...BASE, indexURL, _loadSnapshot: snapshot });
  const pyodide = await loadPyodide({ ...BASE, indexURL });
  prepare(pyodide);
  return pyodide;
}

/** Loads and prepares Pyodide, and answers its memory as a snapshot children start from. */
export async function prepared(indexURL: string): Promise<Uint8Array> {
  const loadPyodide = await loader(indexURL);
  const pyodide = await loadPyodide({ ...BASE, indexURL, _makeSnapshot: true });
  prepare(pyodide);
  return pyodide.makeMemorySnapshot();
}

function prepare(pyodide: PyodideAPI): void {
  pyodide.runPython(DRIVER);
  pyodide.runPython(PRELOAD);
}
