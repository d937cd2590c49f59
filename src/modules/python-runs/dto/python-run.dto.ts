import { ApiProperty } from '@nestjs/swagger';
import { IntField, StringField } from '../../../core/http/validation.js';

/** The longest `sqlQuery` a python run takes, in characters (a report's own SQL has the same cap). */
export const PYTHON_RUN_SQL_MAX_LENGTH = 1_000_000;

/** `POST /embed/dashboard/{publicId}/python-run` (the reference's EmbedPythonFilteredRunInput). */
export class EmbedPythonFilteredRunInputDto {
  @IntField({ min: 1, description: 'The report whose Python runs', example: 42 })
  reportId: number;

  @IntField({
    min: 1,
    description:
      'One of the dashboard’s `reportSnapshots` (its `id`), a snapshot of `reportId`: its `pythonCode` is what runs',
    example: 917,
  })
  reportVersionId: number;

  @StringField({
    minLength: 1,
    maxLength: PYTHON_RUN_SQL_MAX_LENGTH,
    description:
      'The SQL whose rows the code gets (`rows`): the report’s query with the dashboard’s filters applied. ' +
      'It runs on the deployment’s data API as the embed user (their security context).',
    example: "SELECT status, count(*) AS n FROM orders WHERE created_at >= '2026-01-01' GROUP BY 1",
  })
  sqlQuery: string;
}

/** The reference's PythonAnalysisFilteredRun: what a run printed and produced. Never stored. */
export class PythonAnalysisFilteredRunDto {
  @ApiProperty({ format: 'date-time', description: 'When the run was made (a cached answer keeps its time)' })
  at: string;

  @ApiProperty({ description: 'What the code printed, up to 64 KiB (then cut and marked)' })
  stdout: string;

  @ApiProperty({ description: 'What the code printed on stderr (a traceback), up to 64 KiB' })
  stderr: string;

  @ApiProperty({ type: 'integer', description: 'How many rows the query gave the code' })
  inputRowCount: number;

  @ApiProperty({
    required: false,
    type: String,
    description:
      'Why the code failed: its exception line (`ZeroDivisionError: division by zero`), or that it ran too ' +
      'long, used too much memory or stopped. Absent when it ran to the end.',
  })
  executionError?: string;

  @ApiProperty({
    required: false,
    description: 'The value the code left in a variable `output`, as JSON (up to 1 MiB); absent when none',
    // Any JSON value.
    oneOf: [
      { type: 'object', additionalProperties: true },
      { type: 'array', items: {} },
      { type: 'string' },
      { type: 'number' },
      { type: 'boolean' },
      { type: 'null' },
    ],
  })
  outputData?: unknown;
}
