import { Module } from '@nestjs/common';

/** User attributes and per-user values (placeholder). */
@Module({})
export class UserAttributesModule {}
