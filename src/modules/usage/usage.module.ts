import { Module } from '@nestjs/common';

/** Usage analytics tokens (placeholder, filled in by issue 5). */
@Module({})
export class UsageModule {}
