import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { JsonCache } from '../../core/cache/json-cache.js';
import { FairShare, FairShareBusy } from '../../core/limits/fair-share.js';
import { MODEL_DIR, ModelCompiler, type CompileResult, type ModelFile } from './compiler/model-compiler.js';
import { dataModelError } from './data-model.errors.js';
import { GitStore } from './git/git-store.js';

/**
 * Bumped when what this service makes of a model changes (which files it compiles, how errors are
 * named, what the summary holds), so verdicts cached by an older build are not served by a newer
 * one. 2: a valid verdict carries the model's summary (issue 33), which the member diff reads.
 */
const VERDICT_RULES = 2;

/** A verdict, and whether it was reused from an earlier compile of the same tree. */
export type Verdict = CompileResult & { reused: boolean };

/** The files of a project, read from a commit (or a pending commit), for the compiler. */
export async function readModel(
  git: GitStore,
  deploymentId: number,
  commit: string,
  prefix: string,
): Promise<ModelFile[]> {
  const files = (await git.listFiles(deploymentId, commit)).filter((f) =>
    f.path.startsWith(prefix + MODEL_DIR),
  );
  const blobs = await git.readBlobs(
    deploymentId,
    files.map((f) => f.oid),
  );
  return files.map((f) => ({
    fileName: f.path.slice(prefix.length),
    content: blobs.get(f.oid)?.toString('utf8') ?? '',
  }));
}

/**
 * The compiler's verdict on a project's model at a commit, reused for the same model: keyed by the
 * account, the git tree of the model directory (its content, names and all), the schema compiler's
 * version and the compile settings. Validating an unchanged tree then reads one tree id and one
 * cache entry instead of compiling. Only the compiler's own verdicts are kept, never a compile the
 * sandbox stopped (time, memory, crash): that one is tried again. Identical requests that arrive
 * together share one compile.
 *
 * Compiles take fair shares of the process ({@link FairShare}): at most MODEL_COMPILE_CONCURRENCY
 * at once, MODEL_COMPILE_ACCOUNT_CONCURRENCY of them for one account; past its share an account's
 * compile waits its turn, so another account's starts at once (and on the last warm child: an
 * account with compiles waiting leaves it to others). A validate waits up to
 * MODEL_COMPILE_QUEUE_MS, then answers 429 with `Retry-After`; a build waits as long as it takes.
 */
@Injectable()
export class ModelVerdicts implements OnApplicationShutdown {
  private readonly cache: JsonCache<CompileResult>;
  private readonly settings: string;
  private readonly inFlight = new Map<string, Promise<CompileResult>>();
  private readonly shares: FairShare;

  constructor(
    config: AppConfig,
    private readonly git: GitStore,
    private readonly compiler: ModelCompiler,
  ) {
    const compilerVersion = (
      createRequire(import.meta.url)('@cubejs-backend/schema-compiler/package.json') as { version: string }
    ).version;
    const { compileTimeoutMs, compileMemoryMb, compileCacheSeconds } = config.dataModel;
    this.shares = new FairShare({
      label: 'compiles',
      total: config.dataModel.compileConcurrency,
      perAccount: Math.min(config.dataModel.compileAccountConcurrency, config.dataModel.compileConcurrency),
      maxWaitMs: config.dataModel.compileQueueMs,
    });
    this.settings = JSON.stringify([VERDICT_RULES, compilerVersion, compileTimeoutMs, compileMemoryMb]);
    this.cache = new JsonCache({
      name: 'model verdicts',
      redisUrl: config.queue.redisUrl,
      keyPrefix: `${config.queue.prefix}:model-verdict`,
      ttlSeconds: compileCacheSeconds,
      memoryMaxEntries: 1_000,
      memoryMaxBytes: 32 * 1024 * 1024,
      // A valid verdict holds the model's summary: a few KB a cube. A larger one is not kept.
      maxValueBytes: 4 * 1024 * 1024,
      logger: new Logger('ModelVerdicts'),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.cache.close();
  }

  /**
   * The verdict on the model of `commit` (null: a branch without commits, an empty model).
   * `waitForSlot`: how long a compile waits for its share before 429 `compile_limit_reached`
   * (default MODEL_COMPILE_QUEUE_MS; builds pass `Infinity`).
   */
  async of(
    accountId: number,
    deploymentId: number,
    commit: string | null,
    prefix: string,
    options: { waitForSlot?: number } = {},
  ): Promise<Verdict> {
    const tree = commit ? await this.git.treeAt(deploymentId, commit, prefix + MODEL_DIR.slice(0, -1)) : null;
    // No model directory: nothing to compile, and nothing worth a cache entry.
    if (!commit || !tree) return { ...(await this.compiler.compile([])), reused: false };
    const key = createHash('sha256')
      .update(JSON.stringify([accountId, tree, this.settings]))
      .digest('hex');
    const cached = await this.cache.get(key);
    // A valid verdict without a summary was kept by an older build: compiled again.
    if (cached && (!cached.valid || cached.summary)) return { ...cached, reused: true };
    let compiling = this.inFlight.get(key);
    if (!compiling) {
      compiling = this.compile(key, accountId, deploymentId, commit, prefix, options.waitForSlot).finally(
        () => this.inFlight.delete(key),
      );
      this.inFlight.set(key, compiling);
    }
    return { ...(await compiling), reused: false };
  }

  /** Compiles running and waiting in this process, by account (tests, benchmarks). */
  shareStats() {
    return this.shares.stats();
  }

  private async compile(
    key: string,
    accountId: number,
    deploymentId: number,
    commit: string,
    prefix: string,
    waitMs: number | undefined,
  ) {
    let release: () => void;
    try {
      release = await this.shares.acquire(accountId, { waitMs });
    } catch (error) {
      if (!(error instanceof FairShareBusy)) throw error;
      throw dataModelError('compile_limit_reached', error.message, {
        retryAfterSeconds: error.retryAfterSeconds,
      });
    }
    try {
      const files = await readModel(this.git, deploymentId, commit, prefix);
      // An account with more compiles waiting floods: it leaves the last warm child to others.
      const spareWarm = this.shares.waitingFor(accountId) > 0;
      const result = await this.compiler.compile(files, { spareWarm });
      if (result.definitive) await this.cache.set(key, result);
      return result;
    } finally {
      release();
    }
  }
}
