import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfigController } from './app-config.controller.js';
import { TenantSettings } from './entities/tenant-settings.entity.js';
import { SettingsService } from './settings.service.js';
import { TenantSettingsController } from './tenant-settings.controller.js';

/** Tenant settings and app config, one row per account. */
@Module({
  imports: [TypeOrmModule.forFeature([TenantSettings])],
  controllers: [TenantSettingsController, AppConfigController],
  providers: [SettingsService],
  exports: [SettingsService],
})
export class SettingsModule {}
