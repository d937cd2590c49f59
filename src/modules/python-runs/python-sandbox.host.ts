import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { FairShare, FairShareBusy } from '../../core/limits/fair-share.js';
import {
  PythonSandbox,
  PythonSandboxError,
  type PythonRunResult,
  type PythonSandboxOptions,
} from './sandbox/python-sandbox.js';
import { pythonRunsError } from './python-runs.errors.js';

/**
 * The API process's Python sandbox: one pool of warm single-use children (`PYTHON_POOL_SIZE`),
 * started with the API and closed at shutdown. With `PYTHON_POOL_SIZE=0` nothing is kept warm:
 * the sandbox is checked at the first run, and each run starts a child of its own. Worker and CLI
 * processes never start one. The sandbox's errors become the API's (503 when it cannot run code).
 */
@Injectable()
export class PythonSandboxHost implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('PythonSandbox');
  private pool: PythonSandbox | null = null;
  private closed = false;
  /** Runs under way in this process, rows fetched or being fetched included, by account. */
  private readonly shares: FairShare;

  constructor(private readonly config: AppConfig) {
    this.shares = new FairShare({
      label: 'Python runs',
      total: this.maxActive,
      perAccount: Math.min(config.pythonRuns.accountConcurrency, this.maxActive),
      // Never queued: a waiting run would hold its rows in memory.
      maxWaitMs: 0,
      retryAfterSeconds: Math.max(1, Math.ceil(config.pythonRuns.timeoutMs / 1000)),
    });
  }

  onApplicationBootstrap(): void {
    if (this.config.role !== 'api') return;
    this.pool = new PythonSandbox({ ...this.options(), poolSize: this.config.pythonRuns.poolSize });
    // Never rejects: a sandbox that cannot be built says so through available() (and the log).
    // Without warm children the check waits for the first run.
    if (this.config.pythonRuns.poolSize > 0) void this.pool.start();
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    await this.pool?.close();
  }

  /**
   * Throws the API's 503 when the sandbox cannot run code (the check before any work, such as
   * querying the rows).
   */
  async assertAvailable(): Promise<void> {
    if (this.closed) throw pythonRunsError('python_sandbox_unavailable', 'The service is shutting down');
    if (!this.pool) {
      throw pythonRunsError('python_sandbox_unavailable', 'The Python sandbox runs in API processes only');
    }
    await this.pool.start(); // the one check, at start-up (or at the first run without warm children)
    const available = this.pool.available();
    if (available !== true) throw pythonRunsError('python_sandbox_unavailable', available);
  }

  /** Runs `code` over `rows` in the sandbox; throws API errors for what is not the code's doing. */
  async run(code: string, rows: readonly unknown[]): Promise<PythonRunResult> {
    await this.assertAvailable();
    try {
      return await this.pool!.run(code, rows);
    } catch (error) {
      throw this.apiError(error);
    }
  }

  /**
   * Runs `work` (fetching the rows, then running) as one of the runs this process takes at once:
   * {@link maxActive} in all, PYTHON_ACCOUNT_CONCURRENCY of them for one account. Past the
   * account's share a run is refused at once with 429 `python_run_limit_reached`, past the
   * process's with 503 `python_sandbox_busy`, rather than queued with its rows in memory.
   */
  async admit<T>(accountId: number, work: () => Promise<T>): Promise<T> {
    let release: () => void;
    try {
      release = await this.shares.acquire(accountId);
    } catch (error) {
      if (!(error instanceof FairShareBusy)) throw error;
      const retryAfterSeconds = error.retryAfterSeconds;
      throw error.scope === 'account'
        ? pythonRunsError('python_run_limit_reached', error.message, { retryAfterSeconds })
        : pythonRunsError('python_sandbox_busy', error.message, { retryAfterSeconds });
    }
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** Four per warm process (at least eight): a run waits for a process only behind a few others. */
  get maxActive(): number {
    return 4 * Math.max(2, this.config.pythonRuns.poolSize);
  }

  private options(): PythonSandboxOptions {
    const { timeoutMs, memoryMb } = this.config.pythonRuns;
    const { bwrapPath, niceness } = this.config.sandbox;
    return { timeoutMs, memoryMb, bwrapPath, niceness, logger: this.logger };
  }

  private apiError(error: unknown): unknown {
    if (!(error instanceof PythonSandboxError)) return error;
    switch (error.code) {
      case 'sandbox_unavailable':
        return pythonRunsError('python_sandbox_unavailable', error.message);
      case 'sandbox_closed':
        return pythonRunsError('python_sandbox_unavailable', 'The service is shutting down');
      case 'sandbox_busy':
        return pythonRunsError('python_sandbox_busy', error.message);
      case 'input_too_large':
        return pythonRunsError('python_input_too_large', error.message);
      case 'input_invalid':
        return error; // rows from JSON and a string of code: a bug of ours, a 500
    }
  }
}
