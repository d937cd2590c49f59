import { Injectable } from '@nestjs/common';

/** Placeholder until the folders endpoints land. */
@Injectable()
export class FoldersService {}
