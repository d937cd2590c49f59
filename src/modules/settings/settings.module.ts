import { Global, Injectable, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditLogSetting } from '../../core/audit/audit-log-setting.js';
import { AppConfigController } from './app-config.controller.js';
import { AppThemeController } from './app-theme.controller.js';
import { TenantSettings } from './entities/tenant-settings.entity.js';
import { auditLogEnabledSql } from './settings.fragments.js';
import { SettingsRepository } from './settings.repository.js';
import { SettingsService } from './settings.service.js';
import { TenantSettingsController } from './tenant-settings.controller.js';

/** The audit log's switch, read from this module's table (core/audit cannot name it). */
@Injectable()
class TenantAuditLogSetting extends AuditLogSetting {
  enabledSql(accountId: string): string {
    return auditLogEnabledSql(accountId);
  }
}

/** What core needs of this module, provided globally (core never imports a module). */
@Global()
@Module({
  providers: [{ provide: AuditLogSetting, useClass: TenantAuditLogSetting }],
  exports: [AuditLogSetting],
})
class SettingsForCoreModule {}

/** Tenant settings and app config, one row per account. */
@Module({
  imports: [TypeOrmModule.forFeature([TenantSettings]), SettingsForCoreModule],
  controllers: [TenantSettingsController, AppConfigController, AppThemeController],
  providers: [SettingsRepository, SettingsService],
  exports: [SettingsService],
})
export class SettingsModule {}
