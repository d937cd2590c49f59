import { Controller } from '@nestjs/common';
import { FoldersService } from './folders.service.js';

/** Placeholder until the folders endpoints land. */
@Controller('api/v1/deployments/:deploymentId')
export class FoldersController {
  constructor(readonly service: FoldersService) {}
}
