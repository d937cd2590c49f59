/**
 * What a Python job and its answer hold, between {@link PythonSandbox} (in the API process) and the
 * Python child (python-child.mts). They travel in the sandbox's own protocol
 * (src/core/sandbox/protocol.ts: ready, a nonce, the job, one result). The child imports this file
 * for its types only.
 *
 * The job (after the nonce line):
 *   line 1: a {@link JobHeader} as JSON, then `\n`;
 *   the rest: the rows, as one JSON array (passed to Python's `json.loads` as it is).
 * The answer: a {@link PythonAnswer}.
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

export interface PythonAnswer {
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

/** Appended to stdout or stderr when the code printed more than its cap. */
export function truncationMarker(limitBytes: number): string {
  return `\n[output truncated: more than ${limitBytes} bytes]\n`;
}
