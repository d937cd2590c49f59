import { Injectable, Logger } from '@nestjs/common';
import type { EmbedPrincipal } from '../../core/auth/embed-principal.js';
import { DataApiClient } from '../data-api-client/data-api.client.js';
import { EmbedAccessService } from '../embedding/embed-access.service.js';
import { SettingsService } from '../settings/settings.service.js';
import type { EmbedPythonFilteredRunInputDto, PythonAnalysisFilteredRunDto } from './dto/python-run.dto.js';
import { PythonRunCache } from './python-run.cache.js';
import { pythonRunsError } from './python-runs.errors.js';
import { PythonSandboxHost } from './python-sandbox.host.js';

/**
 * Python report runs from an embedded dashboard: the code of one of the dashboard's published
 * report snapshots, over the rows of the caller's SQL as the embed user's data API gives them,
 * in the sandbox. Nothing is stored; successful answers are cached briefly.
 */
@Injectable()
export class PythonRunsService {
  private readonly logger = new Logger('PythonRuns');
  /** Runs under way by cache key: identical requests at the same time share one run. */
  private readonly running = new Map<string, Promise<PythonAnalysisFilteredRunDto>>();

  constructor(
    private readonly embedAccess: EmbedAccessService,
    private readonly settings: SettingsService,
    private readonly dataApi: DataApiClient,
    private readonly sandbox: PythonSandboxHost,
    private readonly cache: PythonRunCache,
  ) {}

  /**
   * Authorised as `GET /embed/dashboard/{publicId}` is (404, or 403 `embedding_not_allowed`),
   * then: 403 while the account has Python analysis off, 403 unless `reportVersionId` is one of
   * the dashboard's snapshots and of `reportId`, 400 when that snapshot has no code.
   */
  async run(
    user: EmbedPrincipal,
    publicId: string,
    input: EmbedPythonFilteredRunInputDto,
  ): Promise<PythonAnalysisFilteredRunDto> {
    const [dashboard, enabled] = await Promise.all([
      this.embedAccess.embedDashboard(user, publicId),
      this.settings.pythonAnalysisEnabled(user.accountId),
    ]);
    if (!enabled) {
      throw pythonRunsError('python_analysis_disabled', 'Python analysis is not enabled for this account');
    }
    const snapshot = dashboard.reportSnapshots.find((s) => s.id === input.reportVersionId);
    if (!snapshot || snapshot.reportId !== input.reportId) {
      throw pythonRunsError(
        'report_version_mismatch',
        `Report version ${input.reportVersionId} is not a published version of report ${input.reportId} on dashboard ${publicId}`,
      );
    }
    const code = snapshot.pythonCode;
    if (code == null || code.trim() === '') {
      throw pythonRunsError(
        'report_has_no_python',
        `Report version ${input.reportVersionId} has no Python code to run`,
      );
    }
    const key = this.cache.keyOf({
      accountId: user.accountId,
      deploymentId: user.deploymentId,
      embedUserId: user.embedUserId,
      securityContext: user.securityContext,
      reportId: input.reportId,
      code,
      sqlQuery: input.sqlQuery,
    });
    const cached = await this.cache.get(key);
    if (cached) return cached;
    const under = this.running.get(key);
    if (under) return under;
    const run = this.sandbox
      .admit(user.accountId, () => this.execute(user, code, input.sqlQuery, key))
      .finally(() => this.running.delete(key));
    this.running.set(key, run);
    return run;
  }

  private async execute(
    user: EmbedPrincipal,
    code: string,
    sqlQuery: string,
    key: string,
  ): Promise<PythonAnalysisFilteredRunDto> {
    // Nothing to ask for rows (a setting to make, not a moment to wait): said before anything starts.
    this.dataApi.requireConfigured();
    // No query for rows that nothing could run on.
    await this.sandbox.assertAvailable();
    const { rows } = await this.dataApi.sql(
      { accountId: user.accountId, deploymentId: user.deploymentId },
      sqlQuery,
      user.securityContext ?? {},
    );
    const result = await this.sandbox.run(code, rows);
    const answer: PythonAnalysisFilteredRunDto = {
      at: new Date().toISOString(),
      stdout: result.stdout,
      stderr: result.stderr,
      inputRowCount: rows.length,
    };
    if (result.executionError !== undefined) {
      answer.executionError = result.executionError;
      if (result.errorKind !== 'exception') {
        this.logger.warn(
          `A python run (account ${user.accountId}, embed user ${user.embedUserId}) was stopped: ${result.executionError}`,
        );
      }
      return answer; // failures are not cached
    }
    if (result.outputData !== undefined) answer.outputData = result.outputData;
    await this.cache.set(key, answer);
    return answer;
  }
}
