import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { Exclude } from 'class-transformer';
import { EnumField, StringField } from '../../../core/http/validation.js';
import { BranchNameField } from '../../data-model/dto/branch-name.js';
import {
  HISTORY_STATUSES,
  STAGES,
  TRIGGERS,
  type HistoryStatus,
  type SyncTrigger,
} from '../dbt-sync.rules.js';

export const SYNC_SOURCES = ['git', 'manifest'] as const;
export type SyncSource = (typeof SYNC_SOURCES)[number];
export const SYNC_OUTPUTS = ['branch', 'files'] as const;
export type SyncOutput = (typeof SYNC_OUTPUTS)[number];

export class StartDbtSyncDto {
  @BranchNameField({
    optional: true,
    nullable: true,
    isNew: true,
    example: 'dbt-sync/orders-review',
    description:
      'The name of the new Cube branch the generated cubes land on (it must not exist). Default: a fresh ' +
      '`dbt-sync/<ref>-<YYYYMMDDHHMMSS>-<8 hex>`. The branch starts from the deploy branch',
  })
  branchName?: string | null;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: 255,
    example: 'main',
    description:
      'A branch or tag of the dbt repository (not a commit SHA), for this sync only. Default: the integration’s ' +
      'branch. With `source: manifest`, it only names the generated branch. Empty is refused',
  })
  ref?: string | null;

  @EnumField(SYNC_SOURCES, {
    optional: true,
    nullable: true,
    enumName: 'StartDbtSyncInputSource',
    description:
      '`git` (default): read `target/manifest.json` from the dbt repository; `manifest`: the posted one',
  })
  source?: SyncSource | null;

  /**
   * Read by the controller from the parsed body as it is, not copied property by property
   * into the DTO as the validation pipe copies the rest of a body: a manifest of 50 MB would keep
   * the event loop busy for seconds. Checked by the service (an object, or null, or left out).
   */
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    nullable: true,
    description:
      'The contents of `target/manifest.json` (dbt manifest schema v10 to v12), required with `source: manifest` ' +
      'and ignored otherwise. This route accepts a body up to `DBT_MANIFEST_MAX_BYTES` (default 50 MB)',
  })
  @Exclude({ toClassOnly: true })
  manifest?: Record<string, unknown> | null;

  @EnumField(SYNC_OUTPUTS, {
    optional: true,
    nullable: true,
    enumName: 'StartDbtSyncInputOutput',
    description:
      '`branch` (default): commit the cubes on a new branch; `files`: keep them with the sync only',
  })
  output?: SyncOutput | null;
}

export class DbtSyncResponseDto {
  @ApiProperty({ example: 'dbt-sync/main-20260817120000-a1b2c3d4' }) branchName: string;
  @ApiProperty({ format: 'uuid' }) syncJobId: string;
  @ApiProperty({
    example: 'dbt-sync.run:42',
    description:
      'The run doing the work; its log lines are also in the deployment’s logs (`?pod=<workflowId>`)',
  })
  workflowId: string;
}

export class ListDbtSyncsQueryDto extends PageQueryDto {
  @EnumField(HISTORY_STATUSES, { optional: true, enumName: 'DbtSyncRunsQueryStatus' })
  status?: HistoryStatus;

  @EnumField(TRIGGERS, { optional: true, enumName: 'DbtSyncRunsQueryTrigger' })
  trigger?: SyncTrigger;
}

export class DbtSyncRunPhaseDto {
  @ApiProperty({ example: 'repo-clone' }) phase: string;
  @ApiProperty({ enum: ['ok', 'failed'] }) outcome: string;
  @ApiProperty({ description: 'When the phase began, ms after the attempt that ended the run began' })
  startedOffsetMs: number;
  @ApiProperty() durationMs: number;
}

export class DbtSyncRunStatsDto {
  @ApiPropertyOptional({ type: Number, nullable: true }) cubeCount?: number | null;
  @ApiPropertyOptional({ type: String, nullable: true }) dbtVersion?: string | null;
  @ApiPropertyOptional({ type: Number, nullable: true }) generatedFileCount?: number | null;
  @ApiPropertyOptional({ type: Number, nullable: true }) macros?: number | null;
  @ApiPropertyOptional({ type: String, nullable: true }) manifestGeneratedAt?: string | null;
  @ApiPropertyOptional({ type: Number, nullable: true }) models?: number | null;
  @ApiPropertyOptional({ type: Number, nullable: true }) sources?: number | null;
}

export class DbtSyncRunTriggerContextDto {
  @ApiPropertyOptional({ type: String, nullable: true }) headSha?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) pushedBranch?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true }) targetBranch?: string | null;
}

export class DbtSyncRunDto {
  @ApiProperty({ format: 'uuid' }) syncJobId: string;
  @ApiProperty() deploymentId: number;
  @ApiProperty({ description: 'The Cube branch the sync writes its cubes to' }) branchName: string;
  @ApiProperty({ enum: SYNC_SOURCES }) source: string;
  @ApiProperty({ format: 'date-time' }) startedAt: string;
  @ApiProperty({ enum: HISTORY_STATUSES }) status: string;
  @ApiProperty({ enum: TRIGGERS }) trigger: string;
  @ApiPropertyOptional({ type: String, nullable: true, format: 'date-time' }) completedAt?: string | null;
  @ApiPropertyOptional({
    type: Number,
    nullable: true,
    description: 'From startedAt to completedAt on the database’s clock: never negative',
  })
  durationMs?: number | null;
  @ApiPropertyOptional({ type: String, nullable: true }) errorMessage?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'repo-clone' }) failedPhase?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'main' }) gitRef?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, enum: Object.keys(STAGES) }) lastStage?: string | null;
  @ApiPropertyOptional({ type: DbtSyncRunPhaseDto, isArray: true, nullable: true }) phases?:
    DbtSyncRunPhaseDto[] | null;
  @ApiPropertyOptional({ type: DbtSyncRunStatsDto, nullable: true }) stats?: DbtSyncRunStatsDto | null;
  @ApiPropertyOptional({ type: DbtSyncRunTriggerContextDto, nullable: true })
  triggerContext?: DbtSyncRunTriggerContextDto | null;
  @ApiPropertyOptional({ type: Number, nullable: true }) userId?: number | null;
}

export class DbtSyncRunListDto extends PageOf(DbtSyncRunDto) {}

export class DbtSyncProgressDto {
  @ApiProperty({ enum: Object.keys(STAGES) }) stage: string;
  @ApiProperty({ minimum: 0, maximum: 100, description: 'Derived from the stage; for display only' })
  percentComplete: number;
  @ApiPropertyOptional({ type: String, nullable: true }) message?: string | null;
}

export class DbtSyncStatusDto {
  @ApiProperty({ format: 'uuid' }) syncJobId: string;
  @ApiProperty({
    enum: Object.keys(STAGES),
    description: 'COMPLETED and FAILED are the only terminal values (a cancelled sync reads FAILED)',
  })
  status: string;
  @ApiProperty({ type: DbtSyncProgressDto }) progress: DbtSyncProgressDto;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'Only when FAILED' }) error?:
    string | null;
}

export class DbtSyncGeneratedFileDto {
  @ApiProperty({ example: 'model/cubes/orders.yml' }) path: string;
}

export class DbtSyncManifestStatsDto {
  @ApiProperty() models: number;
  @ApiProperty() sources: number;
  @ApiProperty() macros: number;
}

export class DbtSyncResultDto {
  @ApiProperty({ format: 'uuid' }) syncJobId: string;
  @ApiProperty({ format: 'date-time' }) completedAt: string;
  @ApiProperty() durationMs: number;
  @ApiProperty() cubeCount: number;
  @ApiProperty({ type: DbtSyncGeneratedFileDto, isArray: true }) generatedFiles: DbtSyncGeneratedFileDto[];
  @ApiProperty({ type: DbtSyncManifestStatsDto }) manifestStats: DbtSyncManifestStatsDto;
}

export class DbtSyncLogEntryDto {
  @ApiProperty({ format: 'date-time' }) timestamp: string;
  @ApiProperty({ enum: ['info', 'error'] }) level: string;
  @ApiProperty() message: string;
  @ApiProperty({ example: 'system', description: 'An open set: `system` today' }) stream: string;
  @ApiPropertyOptional({ type: String, nullable: true, example: 'repo-clone' }) phase?: string | null;
  @ApiPropertyOptional({ type: Number, nullable: true, description: 'On the line that closes a phase' })
  durationMs?: number | null;
}

export class DbtSyncLogListDto extends PageOf(DbtSyncLogEntryDto) {}

export class DbtGeneratedFileContentDto {
  @ApiProperty({ example: 'model/cubes/orders.yml' }) path: string;
  @ApiProperty() content: string;
}

export class DbtSyncGeneratedFilesListDto extends PageOf(DbtGeneratedFileContentDto) {}

export class DbtSyncCancelResponseDto {
  @ApiProperty({ example: 'Cancellation requested: the sync stops before its next phase' }) message: string;
}
