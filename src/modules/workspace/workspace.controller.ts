import { Controller } from '@nestjs/common';
import { WorkspaceService } from './workspace.service.js';

/** Placeholder until the workspace endpoints land. */
@Controller('api/v1/deployments/:deploymentId')
export class WorkspaceController {
  constructor(readonly service: WorkspaceService) {}
}
