import { Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Database } from '../../core/database/database.js';
import { declareJobs } from '../../core/queue/job-definition.js';
import { DeploymentLifecycle } from '../deployments/deployment-lifecycle.js';
import { DeploymentsModule } from '../deployments/deployments.module.js';
import { ModelCompiler } from './compiler/model-compiler.js';
import { BranchesController } from './branches.controller.js';
import { BranchReviewsRepository } from './branch-reviews.repository.js';
import { BranchReviews } from './branch-reviews.service.js';
import { ConnectionController } from './connection.controller.js';
import { BuildStatusController, DataModelController } from './data-model.controller.js';
import { DataModelRepository } from './data-model.repository.js';
import { DeployStates } from './deploy-states.service.js';
import { DevModeController } from './dev-mode.controller.js';
import { EnvironmentsController } from './environments.controller.js';
import { ModelBranch } from './entities/model-branch.entity.js';
import { ModelBuild } from './entities/model-build.entity.js';
import { ModelDevSession } from './entities/model-dev-session.entity.js';
import { ModelEnvironment } from './entities/model-environment.entity.js';
import { ModelBranchReview } from './entities/model-review.entity.js';
import { ModelRemote } from './entities/model-remote.entity.js';
import { ModelUpload, ModelUploadFile } from './entities/model-upload.entity.js';
import { GitStore } from './git/git-store.js';
import { ReposOwnership } from './git/repos-ownership.js';
import { GitHttpController } from './git-http/git-http.controller.js';
import { GitHttpService } from './git-http/git-http.service.js';
import { GitHubModule } from './github/github.module.js';
import { ModelBranches } from './model-branches.service.js';
import { BUILD_JOB, ModelBuilds } from './model-builds.js';
import { ModelConnection } from './model-connection.service.js';
import { ModelDevMode } from './model-dev-mode.service.js';
import { ModelEnvironments } from './model-environments.service.js';
import { ModelFiles } from './model-files.service.js';
import { ModelImports } from './model-imports.js';
import { ModelMerges } from './model-merges.service.js';
import { ModelRefs } from './model-refs.js';
import { ModelRemotes } from './model-remotes.js';
import { ModelReview } from './model-review.service.js';
import { ModelUploads, UPLOAD_SWEEP_JOB } from './model-uploads.service.js';
import { ModelVerdicts } from './model-verdicts.js';
import { ModelWorkspace } from './model-workspace.js';
import { MergesController } from './merges.controller.js';
import { MergeGate } from './merge-gate.js';
import { ReviewsController } from './reviews.controller.js';

/**
 * Plugs the data model into the life of a deployment: a new deployment gets its production
 * environment and its first build (the build sets up the repository with the starter project), or,
 * created without a scaffold, a repository whose deploy branch holds no files; a deleted one loses
 * its repository once the deletion commits.
 */
@Injectable()
class ModelLifecycle implements OnModuleInit {
  constructor(
    private readonly lifecycle: DeploymentLifecycle,
    private readonly builds: ModelBuilds,
    private readonly workspace: ModelWorkspace,
    private readonly git: GitStore,
    private readonly db: Database,
    private readonly repository: DataModelRepository,
  ) {}

  onModuleInit(): void {
    this.lifecycle.register({
      created: async (d) => {
        await this.repository.addProductionEnvironment(d.accountId, d.id);
        if (d.scaffold) {
          await this.builds.queue(d.accountId, d.id, d.deployBranchName, null, 'creation');
          return;
        }
        // No scaffold: the repository is set up now, its deploy branch with no files, so the
        // starter project is never added; the first build comes with the first code.
        this.db.afterCommit(() => this.workspace.prepareEmpty(d.accountId, d.id));
      },
      deleted: (_accountId, deploymentId) => {
        this.db.afterCommit(async () => {
          this.workspace.forget(deploymentId);
          await this.git.destroy(deploymentId);
        });
        return Promise.resolve();
      },
    });
  }
}

/**
 * The data model of each deployment, on git: files, uploads, dev mode, branches, commits,
 * merges, validation with Cube's compiler, builds (the `deployment.build` job) and the connected
 * git-host repository.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([
      ModelBranch,
      ModelBranchReview,
      ModelBuild,
      ModelDevSession,
      ModelEnvironment,
      ModelRemote,
      ModelUpload,
      ModelUploadFile,
    ]),
    DeploymentsModule,
    GitHubModule,
  ],
  controllers: [
    DataModelController,
    DevModeController,
    BranchesController,
    MergesController,
    ReviewsController,
    ConnectionController,
    BuildStatusController,
    EnvironmentsController,
    GitHttpController,
  ],
  exports: [ModelImports, ModelEnvironments, DeployStates],
  providers: [
    DataModelRepository,
    ReposOwnership,
    GitStore,
    ModelCompiler,
    ModelVerdicts,
    ModelRefs,
    ModelWorkspace,
    ModelBuilds,
    ModelRemotes,
    ModelFiles,
    ModelUploads,
    ModelDevMode,
    ModelBranches,
    ModelMerges,
    ModelConnection,
    ModelReview,
    BranchReviewsRepository,
    BranchReviews,
    MergeGate,
    ModelEnvironments,
    DeployStates,
    ModelImports,
    ModelLifecycle,
    GitHttpService,
    declareJobs(BUILD_JOB, UPLOAD_SWEEP_JOB),
  ],
})
export class DataModelModule {}
