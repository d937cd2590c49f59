import { Body, Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentEmbedUser, EmbedTokenRequired } from '../../core/auth/access.decorators.js';
import type { EmbedPrincipal } from '../../core/auth/embed-principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { EmbedPythonFilteredRunInputDto, PythonAnalysisFilteredRunDto } from './dto/python-run.dto.js';
import { PythonRunsService } from './python-runs.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

@ApiTags('Embed')
@Controller('api/v1/embed')
export class PythonRunsController {
  constructor(private readonly runs: PythonRunsService) {}

  @Post('dashboard/:publicId/python-run')
  @Audited()
  @HttpCode(200)
  @EmbedTokenRequired()
  @ApiOperation({
    summary: 'Run a Python report over dashboard-filtered SQL',
    description:
      'For an embed token, authorised exactly as `GET /api/v1/embed/dashboard/{publicId}` (404, or 403 ' +
      '`embedding_not_allowed`). Runs the `pythonCode` of the dashboard’s published report snapshot ' +
      '`reportVersionId` (which must be a snapshot of `reportId`, else 403) over the rows of `sqlQuery`, queried ' +
      'from the deployment’s data API as the embed user (the session’s security context, so row-level security ' +
      'applies). The code comes from the snapshot, never from the caller; it runs in Pyodide inside an OS ' +
      'sandbox (no network, no host files, a time and memory limit). The answer is not stored; a successful ' +
      'one is reused for `PYTHON_RUN_CACHE_SECONDS` for the same report, code, SQL and user. 403 while the ' +
      'account’s tenant setting `pythonAnalysisEnabled` is off; 503 where the sandbox cannot run.',
  })
  @ApiOkResponse({ type: PythonAnalysisFilteredRunDto })
  @ApiErrors(
    'validation_failed',
    'dashboard_not_found',
    'embedding_not_allowed',
    'python_analysis_disabled',
    'report_version_mismatch',
    'report_has_no_python',
    'python_input_too_large',
    'python_sandbox_unavailable',
    'python_sandbox_busy',
    'python_run_limit_reached',
    'data_api_not_configured',
    'data_api_query_invalid',
    'data_api_unavailable',
    'data_api_timeout',
    'data_api_failed',
  )
  postDashboardPythonRun(
    @CurrentEmbedUser() user: EmbedPrincipal,
    @Param('publicId') publicId: string,
    @Body() input: EmbedPythonFilteredRunInputDto,
  ): Promise<PythonAnalysisFilteredRunDto> {
    return this.runs.run(user, publicId, input);
  }
}
