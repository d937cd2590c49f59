import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../../core/config/app-config.js';
import { JsonCache } from '../../core/cache/json-cache.js';
import { MODEL_DIR, ModelCompiler, type CompileResult, type ModelFile } from './compiler/model-compiler.js';
import { GitStore } from './git/git-store.js';

/**
 * Bumped when what this service makes of a model changes (which files it compiles, how errors are
 * named), so verdicts cached by an older build are not served by a newer one.
 */
const VERDICT_RULES = 1;

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
 */
@Injectable()
export class ModelVerdicts implements OnApplicationShutdown {
  private readonly cache: JsonCache<CompileResult>;
  private readonly settings: string;
  private readonly inFlight = new Map<string, Promise<CompileResult>>();

  constructor(
    config: AppConfig,
    private readonly git: GitStore,
    private readonly compiler: ModelCompiler,
  ) {
    const compilerVersion = (
      createRequire(import.meta.url)('@cubejs-backend/schema-compiler/package.json') as { version: string }
    ).version;
    const { compileTimeoutMs, compileMemoryMb, compileCacheSeconds } = config.dataModel;
    this.settings = JSON.stringify([VERDICT_RULES, compilerVersion, compileTimeoutMs, compileMemoryMb]);
    this.cache = new JsonCache({
      name: 'model verdicts',
      redisUrl: config.queue.redisUrl,
      keyPrefix: `${config.queue.prefix}:model-verdict`,
      ttlSeconds: compileCacheSeconds,
      memoryMaxEntries: 1_000,
      memoryMaxBytes: 32 * 1024 * 1024,
      maxValueBytes: 1024 * 1024,
      logger: new Logger('ModelVerdicts'),
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.cache.close();
  }

  /** The verdict on the model of `commit` (null: a branch without commits, an empty model). */
  async of(accountId: number, deploymentId: number, commit: string | null, prefix: string): Promise<Verdict> {
    const tree = commit ? await this.git.treeAt(deploymentId, commit, prefix + MODEL_DIR.slice(0, -1)) : null;
    // No model directory: nothing to compile, and nothing worth a cache entry.
    if (!commit || !tree) return { ...(await this.compiler.compile([])), reused: false };
    const key = createHash('sha256')
      .update(JSON.stringify([accountId, tree, this.settings]))
      .digest('hex');
    const cached = await this.cache.get(key);
    if (cached) return { ...cached, reused: true };
    let compiling = this.inFlight.get(key);
    if (!compiling) {
      compiling = this.compile(key, deploymentId, commit, prefix).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, compiling);
    }
    return { ...(await compiling), reused: false };
  }

  private async compile(key: string, deploymentId: number, commit: string, prefix: string) {
    const result = await this.compiler.compile(await readModel(this.git, deploymentId, commit, prefix));
    if (result.definitive) await this.cache.set(key, result);
    return result;
  }
}
