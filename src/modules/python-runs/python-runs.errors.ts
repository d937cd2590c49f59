import { errorsOf } from '../../core/errors/api-error.js';

export const pythonRunsError = errorsOf(
  'python_analysis_disabled',
  'report_version_mismatch',
  'report_has_no_python',
  'python_input_too_large',
  'python_sandbox_unavailable',
  'python_sandbox_busy',
  'python_run_limit_reached',
);
