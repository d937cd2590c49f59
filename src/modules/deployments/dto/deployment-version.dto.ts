import { ApiProperty } from '@nestjs/swagger';
import { PageOf } from '../../../core/http/pagination.js';
import { RELEASE_CHANNELS } from '../deployment.constants.js';

/** A version a deployment may switch to (`GET .../versions`). */
export class DeploymentVersionDto {
  @ApiProperty({ example: 'v1.6.2', description: 'The image tag of the release' }) version: string;

  @ApiProperty({ enum: RELEASE_CHANNELS, enumName: 'ReleaseChannel' }) releaseChannel: string;

  @ApiProperty({
    example: '1.6.2',
    description: 'The release on its channel, as PUT /deployments/{deploymentId} takes it',
  })
  releaseChannelVersion: string;

  @ApiProperty({ description: 'The version the deployment runs, on the channel it follows' })
  isCurrent: boolean;

  @ApiProperty({ description: 'The head of its channel: the highest release in semantic-version order' })
  isLatestInChannel: boolean;
}

export class DeploymentVersionsListDto extends PageOf(DeploymentVersionDto, { nullablePageInfo: true }) {}
