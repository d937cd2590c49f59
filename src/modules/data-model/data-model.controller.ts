import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Post,
  Put,
  Query,
  UploadedFile,
  UseFilters,
  UseInterceptors,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { CurrentPrincipal, RequireObjectAction } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import type { Page } from '../../core/http/pagination.js';
import { Multipart } from '../../core/http/route-behaviour.js';
import { StringField } from '../../core/http/validation.js';
import { DeploymentScopeFilter } from '../deployments/deployment-scope.filter.js';
import {
  BuildStatusDto,
  BuildStatusQueryDto,
  CommitDto,
  FileHashDto,
  ListFilesQueryDto,
  RemoveFilesDto,
  RenameFilesDto,
  SourceTreeDto,
  UpdateFilesDto,
  UploadFileResponseDto,
  UploadFinishDto,
  UploadFinishResponseDto,
  UploadQueryDto,
  UploadStartBodyDto,
  UploadStartDto,
  ValidateQueryDto,
  ValidationResponseDto,
  WriteResponseDto,
  type FileNodeDto,
} from './dto/data-model.dto.js';
import { DATA_MODEL_ROUTES, legacy, OK, WRITE_ERRORS } from './data-model.routes.js';
import { ModelBuilds } from './model-builds.js';
import { ModelFiles } from './model-files.service.js';
import { ModelUploads } from './model-uploads.service.js';
import { UploadPartInterceptor } from './upload-part.interceptor.js';
import { Audited } from '../../core/audit/audited.decorator.js';

/** The form fields of `POST .../upload/file` besides the file. */
export class UploadFileFieldsDto {
  @StringField({ minLength: 1, maxLength: 1024, description: 'The transaction id, or {"id": ...} as JSON' })
  transaction: string;

  @StringField({ minLength: 1, maxLength: 1024, example: 'model/cubes/orders.yml' }) fileName: string;
}

/** Files of a branch: reading, writing on your dev branch, committing, uploads and validation. */
@ApiTags('Data Model')
@ApiExtraModels(FileHashDto)
@UseFilters(DeploymentScopeFilter)
@Controller(DATA_MODEL_ROUTES)
export class DataModelController {
  constructor(
    private readonly files: ModelFiles,
    private readonly uploads: ModelUploads,
  ) {}

  @Get('data-model/files')
  @RequireObjectAction(Action.SchemaRead)
  @ApiOperation({
    summary: 'The file tree of a branch',
    description:
      'Nodes `{path, type, content?, children}` with absolute paths. `first`/`after` page the top-level ' +
      'nodes; without `first` the whole tree comes back. Your own dev branch shows your pending changes.',
  })
  @ApiOkResponse({ type: SourceTreeDto })
  @ApiErrors(
    'validation_failed',
    'invalid_cursor',
    'deployment_not_found',
    'branch_not_found',
    'invalid_branch_name',
  )
  async listFiles(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: ListFilesQueryDto,
  ): Promise<Page<FileNodeDto> & { data: FileNodeDto[] }> {
    return legacy(await this.files.list(actor, id, query));
  }

  @Put('data-model/files')
  @Audited()
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @ApiOperation({
    summary: 'Write files on your dev branch',
    description:
      'Creates or replaces files as pending changes of your personal dev-mode branch (other branches ' +
      'are refused); `POST /commit` records them. Paths may start with a slash or not.',
  })
  @ApiOkResponse({ type: WriteResponseDto })
  @ApiErrors(...WRITE_ERRORS, 'file_too_large', 'too_many_files', 'file_exists')
  async updateFiles(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: UpdateFilesDto,
  ): Promise<WriteResponseDto> {
    await this.files.write(actor, id, dto);
    return OK;
  }

  @Delete('data-model/files')
  @Audited()
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @ApiOperation({ summary: 'Remove files from your dev branch (pending until committed)' })
  @ApiOkResponse({ type: WriteResponseDto })
  @ApiErrors(...WRITE_ERRORS, 'file_not_found')
  async removeFiles(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: RemoveFilesDto,
  ): Promise<WriteResponseDto> {
    await this.files.remove(actor, id, dto);
    return OK;
  }

  @Post('data-model/files/rename')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @ApiOperation({ summary: 'Rename files on your dev branch (pending until committed)' })
  @ApiOkResponse({ type: WriteResponseDto })
  @ApiErrors(...WRITE_ERRORS, 'file_not_found', 'file_exists')
  async renameFiles(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: RenameFilesDto,
  ): Promise<WriteResponseDto> {
    await this.files.rename(actor, id, dto);
    return OK;
  }

  @Get('data-model/file-hashes')
  @RequireObjectAction(Action.SchemaRead)
  @ApiOperation({
    summary: 'Content hashes of the files an upload would replace',
    description:
      'path -> {hash}, the SHA-1 of each file’s content, for uploading only what changed. The branch is ' +
      'the one an upload with the same parameters addresses: `branchName`; `live=true` your dev-mode ' +
      'branch, `live=false` the deploy branch; neither, your active dev-mode branch, else the deploy branch.',
  })
  @ApiOkResponse({
    schema: { type: 'object', additionalProperties: { $ref: getSchemaPath(FileHashDto) } },
  })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'branch_not_found',
    'not_in_dev_mode',
    'invalid_branch_name',
  )
  fileHashes(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: UploadQueryDto,
  ): Promise<Record<string, FileHashDto>> {
    return this.uploads.fileHashes(actor, id, query);
  }

  @Get('data-model/validate')
  @RequireObjectAction(Action.SchemaRead)
  @ApiOperation({
    summary: 'Compile a branch’s data model',
    description:
      'With neither parameter the deploy branch, with `branchName` that branch, with `devMode=true` your ' +
      'active dev-mode branch (with pending changes). A model that does not compile is 200 with ' +
      '`valid: false` and the compiler’s errors.',
  })
  @ApiOkResponse({ type: ValidationResponseDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'branch_not_found',
    'not_in_dev_mode',
    'compiler_unavailable',
    'compile_limit_reached',
    'invalid_branch_name',
  )
  validate(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: ValidateQueryDto,
  ): Promise<ValidationResponseDto> {
    return this.files.validate(actor, id, query);
  }

  @Post('data-model/upload/start')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @ApiOperation({
    summary: 'Open an upload',
    description:
      'To `branchName` (a query parameter, or in the body where the reference command-line tool sends it; ' +
      'both given and different: 400 `validation_failed`); with `live=true` your dev-mode branch, with ' +
      '`live=false` the deploy branch; with neither, your active dev-mode branch, else the deploy branch. ' +
      'The deploy branch and shared branches need SchemaUpdate. An upload left open expires after an hour.',
  })
  @ApiBody({ type: UploadStartBodyDto, required: false })
  @ApiOkResponse({ type: UploadStartDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'branch_not_found',
    'not_in_dev_mode',
    'branch_not_writable',
    'invalid_branch_name',
  )
  startUpload(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: UploadQueryDto,
    @Body() body: UploadStartBodyDto,
  ): Promise<UploadStartDto> {
    return this.uploads.start(actor, id, query, body);
  }

  @Post('data-model/upload/file')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @Multipart()
  // The part is read under MODEL_MAX_FILE_BYTES as it arrives; past it the request is refused at once.
  @UseInterceptors(UploadPartInterceptor)
  @ApiConsumes('multipart/form-data')
  @ApiBody({
    schema: {
      type: 'object',
      required: ['transaction', 'fileName', 'file'],
      properties: {
        transaction: { type: 'string', description: 'The transaction id, or {"id": ...} as JSON' },
        fileName: { type: 'string', example: 'model/cubes/orders.yml' },
        file: { type: 'string', format: 'binary' },
      },
    },
  })
  @ApiOperation({
    summary: 'Add one file to an open upload',
    description:
      'A part over `MODEL_MAX_FILE_BYTES` is refused as soon as it passes the limit (the connection ' +
      'closes). The bytes of an account’s uploads not yet committed by `finish` count against ' +
      '`MODEL_UPLOAD_MAX_PENDING_BYTES`; past it the part is refused with 429 and nothing is stored.',
  })
  @ApiOkResponse({ type: UploadFileResponseDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'upload_transaction_not_found',
    'invalid_path',
    'file_too_large',
    'upload_limit_reached',
  )
  uploadFile(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    // Accepted as the command-line client sends them; the upload already names its branch.
    @Query() _query: UploadQueryDto,
    @Body() fields: UploadFileFieldsDto,
    @UploadedFile() file: { buffer: Buffer } | undefined,
  ): Promise<UploadFileResponseDto> {
    return this.uploads.file(actor, id, fields, file?.buffer);
  }

  @Post('data-model/upload/finish')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @ApiOperation({
    summary: 'Commit an upload',
    description:
      '`files` is every file the branch should hold (path -> {hash}); with `autoRemoveFiles` (default) ' +
      'files absent from it are removed. One commit, one build, on the branch the upload was opened for: ' +
      '`branchName` (the query parameter, or the body field the reference command-line tool sends) may ' +
      'name it, and naming another is 400 `validation_failed`.',
  })
  @ApiOkResponse({ type: UploadFinishResponseDto })
  @ApiErrors(
    'validation_failed',
    'deployment_not_found',
    'upload_transaction_not_found',
    'branch_not_found',
    'branch_not_writable',
    'upload_hash_mismatch',
    'invalid_path',
    'too_many_files',
    'file_exists',
    'remote_failed',
    'queue_unavailable',
    'invalid_branch_name',
  )
  finishUpload(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: UploadQueryDto,
    @Body() dto: UploadFinishDto,
  ): Promise<UploadFinishResponseDto> {
    return this.uploads.finish(actor, id, query, dto);
  }

  @Post('commit')
  @Audited()
  @HttpCode(200)
  @RequireObjectAction(Action.SchemaUpdateDevBranches)
  @ApiOperation({
    summary: 'Commit (and push) the active branch’s pending changes',
    description:
      'One commit of your pending changes, pushed first when a repository is connected, then a build.',
  })
  @ApiOkResponse({ type: WriteResponseDto })
  @ApiErrors(...WRITE_ERRORS, 'merge_conflict', 'remote_failed', 'queue_unavailable')
  async commit(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Body() dto: CommitDto,
  ): Promise<WriteResponseDto> {
    await this.files.commit(actor, id, dto);
    return OK;
  }
}

@ApiTags('Deployments')
@UseFilters(DeploymentScopeFilter)
@Controller('api/v1/deployments/:deploymentId')
export class BuildStatusController {
  constructor(private readonly builds: ModelBuilds) {}

  @Get('build-status')
  @RequireObjectAction(Action.DeploymentRead)
  @ApiOperation({
    summary: 'Latest build/compile status for a branch (production build or dev-mode)',
    description:
      'Branch: `branchName`, else your active dev-mode branch, else the deploy branch. `status` is ' +
      '`queued` (no worker has taken the build yet: `queuedSeconds` says how long it has waited), ' +
      '`building`, `built`, `failed`, `cancelled` or `none` (never built); an unknown branch is `failed` ' +
      'with `errorText: "Bad branch"`.',
  })
  @ApiOkResponse({ type: BuildStatusDto })
  @ApiErrors('validation_failed', 'deployment_not_found', 'invalid_branch_name')
  buildStatus(
    @CurrentPrincipal() actor: Principal,
    @IdParam('deploymentId') id: number,
    @Query() query: BuildStatusQueryDto,
  ): Promise<BuildStatusDto> {
    return this.builds.status(actor, id, query.branchName);
  }
}
