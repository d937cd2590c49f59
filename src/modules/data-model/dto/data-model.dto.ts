import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { BoolField, IntField, NestedField, ObjectField, StringField } from '../../../core/http/validation.js';
import { MAX_GITHUB_ID } from '../github/dto/github.dto.js';
import { BranchNameField } from './branch-name.js';
import { ImpactItemDto } from './impact-item.dto.js';

const PATH = { minLength: 1, maxLength: 1024, example: '/model/cubes/orders.yml' } as const;

/** A write's branch: by name, by id, or (neither) the caller's active dev-mode branch. */
class BranchTargetDto {
  @BranchNameField({
    optional: true,
    nullable: true,
    description: 'Default: your active dev-mode branch',
  })
  branchName?: string | null;

  @IntField({ optional: true, nullable: true, min: 1, description: 'The branch id, instead of its name' })
  branchId?: number | null;
}

// --- Files -------------------------------------------------------------------------------------------

export class ListFilesQueryDto extends PageQueryDto {
  @BoolField({ optional: true, query: true, description: 'Include each file’s content' })
  withContent?: boolean;

  @BranchNameField({
    optional: true,
    description: 'Default: your active dev-mode branch (with its pending changes), else the deploy branch',
  })
  branchName?: string;

  @BoolField({
    optional: true,
    query: true,
    description:
      'Accepted for compatibility; uploads commit to their branch, so the branch already shows them',
  })
  showLastCLIUpload?: boolean;
}

export class FileNodeDto {
  @ApiProperty({ example: '/model/cubes/orders.yml' }) path: string;
  @ApiProperty({ enum: ['file', 'directory'] }) type: 'file' | 'directory';
  @ApiPropertyOptional({ description: 'With withContent=true, for files' }) content?: string;
  @ApiProperty({ type: () => [FileNodeDto] }) children: FileNodeDto[];
}

export class SourceTreeDto extends PageOf(FileNodeDto, {
  legacy: 'data',
  dataDescription: 'The same nodes as items',
}) {}

export class FileContentDto {
  @StringField(PATH) path: string;
  @StringField({
    maxLength: 100 * 1024 * 1024,
    description: 'UTF-8 text; at most MODEL_MAX_FILE_BYTES bytes',
  })
  content: string;
}

export class UpdateFilesDto extends BranchTargetDto {
  @NestedField(() => FileContentDto, { isArray: true, maxItems: 5000 }) files: FileContentDto[];
}

export class FilePathDto {
  @StringField(PATH) path: string;
}

export class RemoveFilesDto extends BranchTargetDto {
  @NestedField(() => FilePathDto, { isArray: true, maxItems: 5000 }) files: FilePathDto[];
}

export class RenameFileDto {
  @StringField(PATH) path: string;
  @StringField({ ...PATH, example: '/model/cubes/sales.yml' }) newPath: string;
}

export class RenameFilesDto extends BranchTargetDto {
  @NestedField(() => RenameFileDto, { isArray: true, maxItems: 5000 }) files: RenameFileDto[];
}

export class WriteResponseDto {
  @ApiProperty() success: boolean;
}

// --- Uploads -----------------------------------------------------------------------------------------

export class UploadQueryDto {
  @BoolField({
    optional: true,
    query: true,
    description:
      '`true`: your active dev-mode branch (400 `not_in_dev_mode` outside dev mode); `false`: the ' +
      'deploy branch. Absent: your active dev-mode branch, else the deploy branch',
  })
  live?: boolean;

  @BranchNameField({
    optional: true,
    description:
      'The branch. Default: see `live`. On `upload/finish` it must be the branch the upload was opened for',
  })
  branchName?: string;

  @BoolField({
    optional: true,
    query: true,
    description: 'Paths are relative to the deployment’s project root (default true)',
  })
  useDeployProjectRoot?: boolean;
}

/** The body of `POST .../upload/start`: empty, or the branch as the reference command-line tool names it. */
export class UploadStartBodyDto {
  @BranchNameField({
    optional: true,
    description:
      'The branch, where the reference command-line tool sends it (`cube deploy --branch`): the same as ' +
      'the query parameter `branchName`. Both given and different: 400 `validation_failed`',
  })
  branchName?: string;
}

export class UploadTransactionDto {
  @StringField({ minLength: 1, maxLength: 64, example: '1b4e28ba-2fa1-11d2-883f-0016d3cca427' }) id: string;
}

export class UploadStartDto {
  @ApiProperty() deploymentName: string;
  @ApiProperty({ type: UploadTransactionDto }) transaction: UploadTransactionDto;
}

export class UploadFileResponseDto {
  @ApiProperty({ example: 'model/cubes/orders.yml' }) fileName: string;
  @ApiProperty({ description: 'SHA-1 of the content' }) hash: string;
}

export class UploadFinishDto {
  @NestedField(() => UploadTransactionDto) transaction: UploadTransactionDto;

  @ObjectField({
    description: 'Every file the branch should hold: path -> {hash} (SHA-1 of the content)',
    example: { 'model/cubes/orders.yml': { hash: '2aae6c35c94fcfb415dbe95f408b9ce91ee846ed' } },
  })
  files: Record<string, { hash: string }>;

  @BoolField({ optional: true, description: 'Remove files absent from `files` (default true)' })
  autoRemoveFiles?: boolean;

  @BoolField({
    optional: true,
    description: 'Accepted for compatibility: the commit is always made before the answer',
  })
  awaitGitOperations?: boolean;

  @StringField({ optional: true, nullable: true, maxLength: 10_000 }) commitMessage?: string | null;

  @BranchNameField({
    optional: true,
    description:
      'Sent by the reference command-line tool (`cube deploy --branch`): the same as the query parameter ' +
      '`branchName`, the branch the upload was opened for. Both given and different: 400 `validation_failed`',
  })
  branchName?: string;
}

export class UploadFinishResponseDto {
  @ApiPropertyOptional({ description: 'The commit made (absent when nothing changed and no commit exists)' })
  lastHash?: string;
}

export class FileHashDto {
  @ApiProperty({ description: 'SHA-1 of the content' }) hash: string;
}

// --- Validation --------------------------------------------------------------------------------------

export class ValidateQueryDto {
  @BranchNameField({ optional: true, description: 'A named branch (not with devMode)' })
  branchName?: string;

  @BoolField({
    optional: true,
    query: true,
    description: 'Your active dev-mode branch (not with branchName)',
  })
  devMode?: boolean;
}

export class ValidationErrorDto {
  @ApiProperty() message: string;
  @ApiPropertyOptional({ example: 'model/cubes/orders.yml' }) fileName?: string;
}

export class ValidationResponseDto {
  @ApiProperty() deploymentId: number;
  @ApiProperty() branchName: string;
  @ApiProperty({ enum: ['production', 'dev_mode'] }) mode: string;
  @ApiProperty() valid: boolean;
  @ApiProperty({ type: [ValidationErrorDto] }) errors: ValidationErrorDto[];
  @ApiPropertyOptional() cubesCount?: number;
  @ApiProperty({
    type: [ImpactItemDto],
    description:
      'Stored content this model would break compared with the deploy branch’s committed model; empty for ' +
      'the deploy branch itself and when the model does not compile',
  })
  impact: ImpactItemDto[];
}

// --- Dev mode and branches ---------------------------------------------------------------------------

export class StartDevModeDto {
  @BranchNameField({
    optional: true,
    description: 'The branch to fork your personal dev branch from (default: the deploy branch)',
  })
  branchName?: string;
}

export class DevBranchDto {
  @ApiProperty() active: boolean;
  @ApiPropertyOptional({ example: 'dev-7-1a2b3c4d' }) branchName?: string;
  @ApiPropertyOptional({ type: String, nullable: true }) parentBranch?: string | null;
}

export class BranchDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiPropertyOptional({ type: String, nullable: true }) parentBranch?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'The head commit' }) lastHash?:
    string | null;
  @ApiPropertyOptional() isStagingEnvironmentEnabled?: boolean;
  @ApiProperty({
    description:
      'Current approvals of the branch’s head (reviews not dismissed) by users who hold SchemaUpdate now',
  })
  approvals: number;
  @ApiProperty({ description: 'Current requests for changes of the branch’s head' }) changesRequested: number;
}

export class BranchesDto extends PageOf(BranchDto, { legacy: 'data' }) {}

export class CreateBranchDto {
  @BranchNameField({ minLength: 1, isNew: true }) name: string;

  @BranchNameField({ optional: true, description: 'Default: the deploy branch' }) from?: string;

  @BoolField({ optional: true, description: 'Enter dev mode on the new branch' }) activate?: boolean;

  @BoolField({ optional: true, description: 'The same as activate (sent by the command-line client)' })
  enterDevMode?: boolean;
}

export class DeleteBranchQueryDto {
  @BranchNameField({ description: 'Names contain slashes, hence a query parameter' })
  branchName: string;

  @BoolField({ optional: true, query: true, description: 'Also delete it on the connected repository' })
  removeOnUpstream?: boolean;
}

export class StagingEnvironmentDto extends BranchTargetDto {
  @BoolField() enabled: boolean;
}

export class BranchEnvelopeDto {
  @ApiProperty({ type: BranchDto }) data: BranchDto;
}

// --- Commits and merges ------------------------------------------------------------------------------

export class CommitDto {
  @StringField({ optional: true, nullable: true, maxLength: 10_000, example: 'Add the sales cube' })
  message?: string | null;

  @BoolField({ optional: true, description: 'Leave dev mode after committing' }) exitDevMode?: boolean;

  @BoolField({
    optional: true,
    description: 'When the branch moved under your pending changes and they conflict, keep your version',
  })
  resolveMergeConflict?: boolean;

  @BranchNameField({
    optional: true,
    description: 'Sent by the command-line client: your dev branch',
  })
  branchName?: string;
}

export class PullDto {
  @BranchNameField({ minLength: 1 }) branchName: string;
}

export class PullResponseDto {
  @ApiProperty() buildTriggered: boolean;
}

export class MergeDto extends BranchTargetDto {
  @StringField({ optional: true, nullable: true, maxLength: 10_000 }) message?: string | null;
  @BoolField({ optional: true, description: 'One commit instead of a merge commit' }) squashCommits?: boolean;
  @BoolField({ optional: true, description: 'Make the parent branch your active branch' })
  switchToParentBranch?: boolean;
  @BoolField({ optional: true, description: 'Delete the merged branch' }) deleteBranch?: boolean;
  @BoolField({
    optional: true,
    description:
      'Tenant admins only: merge into the deploy branch although its merge gate is not met; recorded in the audit log',
  })
  overrideMergeGate?: boolean;
}

export class MergeToDefaultDto extends BranchTargetDto {
  @StringField({
    optional: true,
    nullable: true,
    maxLength: 10_000,
    description: 'Required by the reference; a default message is used when absent',
  })
  message?: string | null;

  @BoolField({ optional: true, description: 'Delete the merged branch' }) removeBranchAfterMerge?: boolean;

  @BoolField({
    optional: true,
    description:
      'Tenant admins only: merge although the merge gate of the deploy branch is not met; recorded in the audit log',
  })
  overrideMergeGate?: boolean;
}

export class MergeResponseDto {
  @ApiProperty() merged: boolean;
  @ApiProperty() branchDeleted: boolean;
}

// --- Builds ------------------------------------------------------------------------------------------

export class BuildStatusQueryDto {
  @BranchNameField({
    optional: true,
    nullable: true,
    description: 'Default: your active dev-mode branch, else the deploy branch',
  })
  branchName?: string;
}

export class BuildStatusDto {
  @ApiProperty() deploymentId: number;
  @ApiProperty() branchName: string;
  @ApiProperty({ enum: ['production', 'dev_mode'] }) mode: string;
  @ApiProperty({
    enum: ['queued', 'building', 'built', 'failed', 'cancelled', 'none'],
    description:
      '`queued` until a worker takes the build (and while a retry waits for one), then `building` ' +
      'until it ends `built`, `failed` or `cancelled`; `none`: never built',
  })
  status: string;
  @ApiPropertyOptional({ type: Number, nullable: true }) buildJobId?: number | null;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description:
      'Without a runtime that runs deployments: the build run’s own state. With ' +
      '`DEPLOYMENT_RUNTIME=kubernetes`, for a branch the deployment serves (the deploy branch, a ' +
      'staging branch): `deploying`, `deployed` or `failed` (see `deploymentStatusReason`); null ' +
      'before its first successful build is deployed and for branches not served',
  })
  deploymentStatus?: string | null;
  @ApiPropertyOptional({
    type: String,
    nullable: true,
    description:
      'With `DEPLOYMENT_RUNTIME=kubernetes`: why the rollout failed (the runtime’s message), or what ' +
      'it waits for; null when deployed',
  })
  deploymentStatusReason?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) errorText?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) filesHash?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'The commit built' }) lastHash?:
    string | null;
  @ApiPropertyOptional({ type: String, nullable: true, format: 'date-time' }) updatedAt?: string | null;
  @ApiPropertyOptional({
    type: Number,
    description: 'Only while `queued`: how long the build has waited for a worker, whole seconds',
    example: 12,
  })
  queuedSeconds?: number;
  @ApiPropertyOptional({
    type: String,
    description: 'Only while `queued`: why nothing happens yet',
    example: 'Waiting for a worker',
  })
  message?: string;
}

// --- Remote ------------------------------------------------------------------------------------------

export class ConnectGitHubDto {
  @IntField({ min: 1, max: MAX_GITHUB_ID, description: 'The GitHub App installation' })
  installationId: number;

  @StringField({
    minLength: 1,
    maxLength: 255,
    example: 'acme/analytics-model',
    description: 'owner/repo, or a repository name of the installation’s account',
  })
  name: string;

  @BranchNameField({ optional: true, isNew: true, description: 'Default: the repository’s default branch' })
  deployBranchName?: string;

  @BranchNameField({
    optional: true,
    isNew: true,
    description:
      'The same as `deployBranchName`, as the reference command-line tool sends it (`cube github connect ' +
      '--branch`). Both given and different: 400 `validation_failed`',
  })
  branch?: string;

  @StringField({ optional: true, maxLength: 1024, example: '/', description: 'Default: /' })
  deployProjectRoot?: string;

  @BoolField({ optional: true, description: 'Create the repository (organisation installations)' })
  isNewRepo?: boolean;

  @BoolField({ optional: true, description: 'With isNewRepo: a private repository (default true)' })
  private?: boolean;
}
