import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsArray, IsIn, ValidateIf } from 'class-validator';
import { LegacyPageQueryDto, PageOf } from '../../../core/http/pagination.js';
import {
  BoolField,
  EnumField,
  IntField,
  ObjectField,
  StringArrayField,
  StringField,
} from '../../../core/http/validation.js';
import {
  CLOUD_PROVIDERS,
  CREATION_METHODS,
  CREATION_STEPS,
  DEPLOY_MODES,
  RELEASE_CHANNELS,
  TEMPLATES,
} from '../deployment.constants.js';

export class CreateDeploymentDto {
  @StringField({ minLength: 1, maxLength: 255, example: 'Sales analytics' }) name: string;

  @EnumField(CLOUD_PROVIDERS, { enumName: 'CloudProvider' }) cloudProvider: (typeof CLOUD_PROVIDERS)[number];

  @BoolField() isManaged: boolean;

  @StringField({
    minLength: 1,
    maxLength: 64,
    example: 'aws-us-east-1',
    description: 'A region name from GET /api/v1/regions',
  })
  region: string;

  @StringField({ minLength: 1, maxLength: 64, example: 'cubecloud' }) targetPlatform: string;

  @EnumField(CREATION_STEPS, { enumName: 'CreationStep' }) creationStep: (typeof CREATION_STEPS)[number];

  @EnumField(CREATION_METHODS, { optional: true, nullable: true, enumName: 'CreationMethod' })
  creationMethod?: (typeof CREATION_METHODS)[number] | null;

  @EnumField(DEPLOY_MODES, { optional: true, nullable: true, enumName: 'DeployMode' })
  deployMode?: (typeof DEPLOY_MODES)[number] | null;
}

export class AdvanceCreationStepDto {
  @EnumField(CREATION_STEPS, { enumName: 'CreationStep', description: 'A later step of the wizard' })
  creationStep: (typeof CREATION_STEPS)[number];
}

export class UpdateDeploymentDto {
  @StringField({ optional: true, minLength: 1, maxLength: 255 }) name?: string;

  @EnumField(CLOUD_PROVIDERS, { optional: true, enumName: 'CloudProvider' }) cloudProvider?: string;

  @StringField({ optional: true, nullable: true, maxLength: 64 }) region?: string | null;

  @EnumField(RELEASE_CHANNELS, { optional: true, enumName: 'ReleaseChannel' }) releaseChannel?: string;

  @StringField({
    optional: true,
    nullable: true,
    maxLength: 64,
    example: '1.6.1',
    description:
      'One of the versions GET .../versions lists for the target channel (`1.6.1` or `v1.6.1`). A version ' +
      'other than the head is held; the head, or null, follows the channel',
  })
  releaseChannelVersion?: string | null;

  @BoolField({
    optional: true,
    nullable: true,
    description:
      'True holds the version (without releaseChannelVersion: the one it runs); false or null follows the head of the channel',
  })
  releaseChannelVersionHold?: boolean | null;

  @EnumField(TEMPLATES, { optional: true, enumName: 'DeploymentTemplate' }) template?: string;

  @ObjectField({
    optional: true,
    nullable: true,
    description:
      'Merged key by key into the stored variables (JSON merge patch: a null value removes the key)',
  })
  templateVariables?: Record<string, unknown> | null;

  @StringField({ optional: true, nullable: true, maxLength: 255 }) defaultLaunchpadViewGroup?: string | null;

  @StringArrayField({ optional: true, nullable: true, maxItems: 50, maxLength: 255 }) launchpadTabs?:
    string[] | null;

  @EnumField(CREATION_METHODS, { optional: true, nullable: true, enumName: 'CreationMethod' })
  creationMethod?: string | null;

  @EnumField(DEPLOY_MODES, { optional: true, nullable: true, enumName: 'DeployMode' }) deployMode?:
    string | null;

  @StringField({ optional: true, nullable: true, maxLength: 255 }) customDomain?: string | null;

  @StringField({ optional: true, minLength: 1, maxLength: 255 }) deployBranchName?: string;

  @BoolField({ optional: true }) deployBranchReadOnly?: boolean;

  @BoolField({ optional: true }) deployBranchMergeAllowed?: boolean;

  @IntField({
    optional: true,
    min: 0,
    max: 10,
    description:
      'The merge gate: approvals by SchemaUpdate holders other than the change’s authors that a merge into ' +
      'the deploy branch needs (0: none)',
  })
  deployBranchRequiredApprovals?: number;

  @BoolField({
    optional: true,
    description: 'The merge gate: refuse a merge into the deploy branch that would break stored content',
  })
  deployBranchBlockNewBrokenContent?: boolean;

  @StringField({ optional: true, minLength: 1, maxLength: 1024 }) deployProjectRoot?: string;
}

export class DeploymentsQueryDto extends LegacyPageQueryDto {
  @ApiProperty({ required: false, enum: CREATION_STEPS, enumName: 'CreationStep', isArray: true })
  @Transform(({ value }) => (typeof value === 'string' ? value.split(',') : value))
  @ValidateIf((_, v) => v !== undefined)
  @IsArray()
  @IsIn(CREATION_STEPS, {
    each: true,
    message: `each value in creationStep must be one of: ${CREATION_STEPS.join(', ')}`,
  })
  creationStep?: string[];
}

export class DeploymentDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ example: 'https://deployment-1.platform.localhost' }) deploymentUrl: string;
  @ApiProperty({ enum: CREATION_STEPS, enumName: 'CreationStep' }) creationStep: string;
}

export class DeploymentSettingsDto extends DeploymentDto {
  @ApiProperty({ enum: CLOUD_PROVIDERS, enumName: 'CloudProvider' }) cloudProvider: string;
  @ApiProperty({ type: String, nullable: true }) region: string | null;
  @ApiProperty({ enum: CREATION_METHODS, enumName: 'CreationMethod', nullable: true }) creationMethod:
    string | null;
  @ApiProperty({ enum: DEPLOY_MODES, enumName: 'DeployMode', nullable: true }) deployMode: string | null;
  @ApiProperty({ type: Boolean, nullable: true }) isManaged: boolean | null;
  @ApiProperty({ type: String, nullable: true }) targetPlatform: string | null;
  @ApiProperty({ enum: RELEASE_CHANNELS, enumName: 'ReleaseChannel' }) releaseChannel: string;
  @ApiProperty({
    type: String,
    nullable: true,
    example: '1.6.2',
    description:
      'The version the deployment runs: the one it holds, else the head of its channel (null only while the channel has no release)',
  })
  releaseChannelVersion: string | null;
  @ApiProperty({
    description: 'True: it stays on releaseChannelVersion; false: it follows the head of its channel',
  })
  releaseChannelVersionHold: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'v1.6.2',
    description: 'The image tag of releaseChannelVersion (read-only)',
  })
  cubeImageVersion: string | null;
  @ApiProperty({ enum: TEMPLATES, enumName: 'DeploymentTemplate' }) template: string;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true }) templateVariables: Record<
    string,
    unknown
  > | null;
  @ApiProperty({ type: String, nullable: true }) defaultLaunchpadViewGroup: string | null;
  @ApiProperty({ type: String, isArray: true, nullable: true }) launchpadTabs: string[] | null;
  @ApiProperty({ type: String, nullable: true }) customDomain: string | null;
  @ApiProperty() deployBranchName: string;
  @ApiProperty() deployBranchReadOnly: boolean;
  @ApiProperty() deployBranchMergeAllowed: boolean;
  @ApiProperty({
    minimum: 0,
    maximum: 10,
    description: 'Approvals a merge into the deploy branch needs (the merge gate; 0: none)',
  })
  deployBranchRequiredApprovals: number;
  @ApiProperty({
    description: 'A merge into the deploy branch may not break stored content (the merge gate)',
  })
  deployBranchBlockNewBrokenContent: boolean;
  @ApiProperty() deployProjectRoot: string;
  @ApiProperty() isCubeSqlEnabled: boolean;
  @ApiProperty() isSupportPreAggregations: boolean;
}

export class DeploymentsListDto extends PageOf(DeploymentDto, { legacy: 'offset', nullablePageInfo: true }) {}

export class DeploymentDeleteResponseDto {
  @ApiProperty() success: boolean;
}

export class RegionDto {
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) title: string | null;
  @ApiProperty({ type: String, nullable: true }) provider: string | null;
  @ApiProperty({ type: Boolean, nullable: true }) isPublic: boolean | null;
  @ApiProperty({ type: Boolean, nullable: true }) isDedicated: boolean | null;
  @ApiProperty({ type: Boolean, nullable: true }) isHybrid: boolean | null;
  @ApiProperty({ type: Boolean, nullable: true }) useAiEngineer: boolean | null;
}

export class RegionsListDto extends PageOf(RegionDto, { legacy: 'offset', nullablePageInfo: true }) {}
