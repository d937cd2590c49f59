/**
 * What passes between {@link PythonSandbox} (the pool, in the API process) and the Python child
 * (python-child.mts), which runs inside bubblewrap. The child imports this file for its types only:
 * inside the sandbox it can load nothing but its own file, Node's built-ins and Pyodide.
 *
 * Standard input (parent to child), written once, after the child said it is ready:
 *   line 1: a {@link JobHeader} as JSON, then `\n`;
 *   the rest: the rows, as one JSON array (passed to Python's `json.loads` as it is).
 * {@link RESULT_FD} (child to parent), one JSON document per line:
 *   a {@link ReadyMessage} once Pyodide is loaded, then a {@link ResultMessage} once the job ran.
 * The child's standard output is discarded; its standard error is kept (a tail) for the log.
 */

/** The caps the child applies to what it captures and answers. The parent enforces them again. */
export interface OutputLimits {
  maxStdoutBytes: number;
  maxStderrBytes: number;
  /** The most bytes `output`, as JSON, may take. */
  maxOutputBytes: number;
}

export interface JobHeader {
  code: string;
  limits: OutputLimits;
}

export interface ReadyMessage {
  type: 'ready';
}

export interface ResultMessage {
  type: 'result';
  /** What the code printed, up to its cap; the parent adds the truncation marker. */
  stdout: string;
  stderr: string;
  stdoutTruncated?: boolean;
  stderrTruncated?: boolean;
  /** The exception line (`ZeroDivisionError: division by zero`) when the code raised. */
  executionError?: string;
  /** The value of the code's `output` variable, when it set one and it could be sent as JSON. */
  outputData?: unknown;
}

export type ChildMessage = ReadyMessage | ResultMessage;

/**
 * A pipe of its own for the messages: nothing the code prints (even by reaching Node's
 * `process.stdout` through Pyodide's JS bridge) can be taken for the ready signal. The child
 * defines the same number (it may import no value from here).
 */
export const RESULT_FD = 3;

/** The pipe on which bubblewrap reads the seccomp filter (`--seccomp 4`). */
export const SECCOMP_FD = 4;

/** Appended to stdout or stderr when the code printed more than its cap. */
export function truncationMarker(limitBytes: number): string {
  return `\n[output truncated: more than ${limitBytes} bytes]\n`;
}
