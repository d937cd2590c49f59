import { ApiProperty } from '@nestjs/swagger';
import { PageOf, PageQueryDto } from '../../../core/http/pagination.js';
import { EnumField, StringField } from '../../../core/http/validation.js';
import {
  DEFAULT_LOG_CONTAINER,
  LOG_CONTAINERS,
  LOG_SOURCES,
  type LogContainer,
  type LogSource,
} from '../deployment-runtime.js';

export class DeploymentLogsQueryDto extends PageQueryDto {
  @EnumField(LOG_SOURCES, {
    optional: true,
    nullable: true,
    enumName: 'DeploymentLogsQuerySource',
    description: 'Only the production pods, or only the dev-mode ones (default: both)',
  })
  source?: LogSource;

  @StringField({
    optional: true,
    nullable: true,
    minLength: 1,
    maxLength: 253,
    description:
      'One pod of the deployment (a name from `GET .../pods`); with no runtime configured, one job run ' +
      '(a `pod` value of the lines)',
  })
  pod?: string;

  @EnumField(LOG_CONTAINERS, {
    optional: true,
    nullable: true,
    enumName: 'DeploymentLogsQueryContainer',
    description: `The container to read (default \`${DEFAULT_LOG_CONTAINER}\`): by name, or \`INIT\` (each pod's first init container) or \`MAIN\` (each pod's first container)`,
  })
  container?: LogContainer;
}

export class DeploymentLogLineDto {
  @ApiProperty({
    description: 'When the line was written: ISO 8601 in UTC',
    example: '2026-01-15T10:00:00.123456789Z',
  })
  date: string;
  @ApiProperty({
    description: 'The pod that wrote it (with no runtime configured: the job run, `<job>:<id>`)',
  })
  pod: string;
  @ApiProperty() message: string;
}

export class DeploymentLogsDto extends PageOf(DeploymentLogLineDto) {}

export class DeploymentPodDto {
  @ApiProperty() name: string;
  @ApiProperty({
    type: String,
    nullable: true,
    required: false,
    description: 'As kubectl shows it: the phase, a waiting container’s reason, or `Terminating`',
  })
  status?: string | null;
  @ApiProperty({ type: Boolean, nullable: true, required: false }) ready?: boolean | null;
  @ApiProperty({
    type: 'integer',
    nullable: true,
    required: false,
    description: 'Restarts of its containers, summed',
  })
  restartCount?: number | null;
  @ApiProperty({ type: String, nullable: true, required: false, description: 'The pod’s `type` label' })
  type?: string | null;
  @ApiProperty({ type: String, isArray: true, nullable: true, required: false }) containers?: string[] | null;
}

export class DeploymentPodsDto extends PageOf(DeploymentPodDto) {}
