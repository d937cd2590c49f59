import { Injectable } from '@nestjs/common';

/** Placeholder until the workbooks endpoints land. */
@Injectable()
export class WorkbooksService {}
