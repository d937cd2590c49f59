import { Module } from '@nestjs/common';

/** SCIM 2.0 provisioning of console users and groups (placeholder, filled in by issue 5). */
@Module({})
export class ScimModule {}
