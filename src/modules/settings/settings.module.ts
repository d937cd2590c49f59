import { Module } from '@nestjs/common';

/** Tenant settings and app config (placeholder). */
@Module({})
export class SettingsModule {}
