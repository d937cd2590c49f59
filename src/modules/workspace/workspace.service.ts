import { Injectable } from '@nestjs/common';

/** Placeholder until the workspace endpoints land. */
@Injectable()
export class WorkspaceService {}
