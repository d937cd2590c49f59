import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import type { AppConfigDto, AppConfigInputDto } from './dto/app-config.dto.js';
import type { AppThemeResponseDto } from './dto/app-theme.dto.js';
import type { TenantSettingsDto, TenantSettingsInputDto } from './dto/tenant-settings.dto.js';
import { SettingsRepository, type SettingsChange, type SettingsRow } from './settings.repository.js';

/** What an account without a row has; the column defaults of the migration say the same. */
const DEFAULTS: SettingsRow = {
  auditLogEnabled: false,
  auditLogEnabledAt: null,
  hasSupportAccess: false,
  useAIBIUserInterface: false,
  maintenanceWindowEnabled: false,
  maintenanceWindowDay: 'sunday',
  maintenanceWindowTime: '02:00',
  oidcEnabled: false,
  appTheme: null,
  applyThemeGlobally: false,
  creatorMode: null,
  embedding: null,
  restrictDataDownload: false,
  sheetsAgentChatEnabled: false,
  sheetsUi: null,
  timezoneSettings: null,
  pythonAnalysisEnabled: false,
};

/**
 * Tenant settings and app config of an account, kept in one `tenant_settings` row. Reads never
 * write; an update is one `INSERT ... ON CONFLICT DO UPDATE` that sets only the fields it was
 * given, so concurrent updates of different fields all land.
 */
@Injectable()
export class SettingsService {
  constructor(private readonly settings: SettingsRepository) {}

  async getTenantSettings(actor: Principal): Promise<TenantSettingsDto> {
    return toTenantSettings(await this.read(actor.accountId));
  }

  /** Omitted or null fields are left unchanged. */
  async updateTenantSettings(actor: Principal, dto: TenantSettingsInputDto): Promise<TenantSettingsDto> {
    const changes: SettingsChange[] = [];
    for (const field of [
      'auditLogEnabled',
      'hasSupportAccess',
      'useAIBIUserInterface',
      'maintenanceWindowEnabled',
      'maintenanceWindowDay',
      'maintenanceWindowTime',
      'oidcEnabled',
      'pythonAnalysisEnabled',
    ] as const) {
      const value = dto[field];
      if (value !== undefined && value !== null) changes.push([field, value]);
    }
    return toTenantSettings(await this.write(actor.accountId, changes));
  }

  /** Whether embed users of the account may run reports' Python (off by default). */
  async pythonAnalysisEnabled(accountId: number): Promise<boolean> {
    return (await this.read(accountId)).pythonAnalysisEnabled;
  }

  /** Whether the account restricts data downloads (app config `restrictDataDownload`; off by default). */
  async dataDownloadsRestricted(accountId: number): Promise<boolean> {
    return (await this.read(accountId)).restrictDataDownload;
  }

  async getAppConfig(actor: Principal): Promise<AppConfigDto> {
    return toAppConfig(await this.read(actor.accountId));
  }

  /** The theme fields of the app config (`GET /app-theme`). */
  async getAppTheme(accountId: number): Promise<AppThemeResponseDto> {
    const row = await this.read(accountId);
    return { appTheme: row.appTheme, applyThemeGlobally: row.applyThemeGlobally };
  }

  /**
   * Booleans: omitted or null leaves them unchanged. Objects: omitted leaves them, null removes
   * them, an object replaces the stored one as a whole.
   */
  async updateAppConfig(actor: Principal, dto: AppConfigInputDto): Promise<AppConfigDto> {
    const changes: SettingsChange[] = [];
    for (const field of ['applyThemeGlobally', 'restrictDataDownload', 'sheetsAgentChatEnabled'] as const) {
      const value = dto[field];
      if (value !== undefined && value !== null) changes.push([field, value]);
    }
    for (const field of ['appTheme', 'creatorMode', 'embedding', 'sheetsUi', 'timezoneSettings'] as const) {
      const value = dto[field];
      if (value !== undefined) changes.push([field, value === null ? null : JSON.stringify(value)]);
    }
    return toAppConfig(await this.write(actor.accountId, changes));
  }

  private async read(accountId: number): Promise<SettingsRow> {
    return (await this.settings.find(accountId)) ?? DEFAULTS;
  }

  private async write(accountId: number, changes: SettingsChange[]): Promise<SettingsRow> {
    if (changes.length === 0) return this.read(accountId);
    return this.settings.upsert(accountId, changes);
  }
}

function toTenantSettings(row: SettingsRow): TenantSettingsDto {
  return {
    auditLogEnabled: row.auditLogEnabled,
    auditLogEnabledCurrent: row.auditLogEnabled,
    auditLogEnabledTimestamp: row.auditLogEnabledAt?.getTime() ?? 0,
    hasSupportAccess: row.hasSupportAccess,
    useAIBIUserInterface: row.useAIBIUserInterface,
    maintenanceWindowEnabled: row.maintenanceWindowEnabled,
    maintenanceWindowDay: row.maintenanceWindowDay,
    maintenanceWindowTime: row.maintenanceWindowTime,
    oidcEnabled: row.oidcEnabled,
    pythonAnalysisEnabled: row.pythonAnalysisEnabled,
  };
}

function toAppConfig(row: SettingsRow): AppConfigDto {
  return {
    appTheme: row.appTheme,
    applyThemeGlobally: row.applyThemeGlobally,
    creatorMode: row.creatorMode,
    embedding: row.embedding,
    restrictDataDownload: row.restrictDataDownload,
    sheetsAgentChatEnabled: row.sheetsAgentChatEnabled,
    sheetsUi: row.sheetsUi,
    timezoneSettings: row.timezoneSettings,
  };
}
