import { Controller } from '@nestjs/common';
import { WorkbooksService } from './workbooks.service.js';

/** Placeholder until the workbooks endpoints land. */
@Controller('api/v1/deployments/:deploymentId')
export class WorkbooksController {
  constructor(readonly service: WorkbooksService) {}
}
