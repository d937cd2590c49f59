import { Module } from '@nestjs/common';

/** OAuth integrations, per-user OAuth tokens and OIDC token configs (placeholder). */
@Module({})
export class IntegrationsModule {}
