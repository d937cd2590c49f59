import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';
import { queryRows } from '../../core/database/sql.js';
import type { AppConfigDto, AppConfigInputDto } from './dto/app-config.dto.js';
import type { TenantSettingsDto, TenantSettingsInputDto, Weekday } from './dto/tenant-settings.dto.js';

interface SettingsRow {
  auditLogEnabled: boolean;
  auditLogEnabledAt: Date | null;
  hasSupportAccess: boolean;
  useAIBIUserInterface: boolean;
  maintenanceWindowEnabled: boolean;
  maintenanceWindowDay: Weekday;
  maintenanceWindowTime: string;
  oidcEnabled: boolean;
  appTheme: AppConfigDto['appTheme'];
  applyThemeGlobally: boolean;
  creatorMode: AppConfigDto['creatorMode'];
  embedding: AppConfigDto['embedding'];
  restrictDataDownload: boolean;
  sheetsAgentChatEnabled: boolean;
  sheetsUi: AppConfigDto['sheetsUi'];
  timezoneSettings: AppConfigDto['timezoneSettings'];
}

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
};

/** Every field, its column, and the SQL type its parameter is cast to. */
const FIELDS: Record<
  keyof SettingsRow,
  [column: string, type: 'boolean' | 'text' | 'jsonb' | 'timestamptz']
> = {
  auditLogEnabled: ['audit_log_enabled', 'boolean'],
  auditLogEnabledAt: ['audit_log_enabled_at', 'timestamptz'],
  hasSupportAccess: ['has_support_access', 'boolean'],
  useAIBIUserInterface: ['use_aibi_user_interface', 'boolean'],
  maintenanceWindowEnabled: ['maintenance_window_enabled', 'boolean'],
  maintenanceWindowDay: ['maintenance_window_day', 'text'],
  maintenanceWindowTime: ['maintenance_window_time', 'text'],
  oidcEnabled: ['oidc_enabled', 'boolean'],
  appTheme: ['app_theme', 'jsonb'],
  applyThemeGlobally: ['apply_theme_globally', 'boolean'],
  creatorMode: ['creator_mode', 'jsonb'],
  embedding: ['embedding', 'jsonb'],
  restrictDataDownload: ['restrict_data_download', 'boolean'],
  sheetsAgentChatEnabled: ['sheets_agent_chat_enabled', 'boolean'],
  sheetsUi: ['sheets_ui', 'jsonb'],
  timezoneSettings: ['timezone_settings', 'jsonb'],
};

const SELECT_COLUMNS = Object.entries(FIELDS)
  .map(([field, [column]]) => `s.${column} AS "${field}"`)
  .join(', ');

type Change = [field: keyof SettingsRow, value: unknown];

/**
 * Tenant settings and app config of an account, kept in one `tenant_settings` row. Reads never
 * write; an update is one `INSERT ... ON CONFLICT DO UPDATE` that sets only the fields it was
 * given, so concurrent updates of different fields all land.
 */
@Injectable()
export class SettingsService {
  constructor(private readonly dataSource: DataSource) {}

  async getTenantSettings(actor: Principal): Promise<TenantSettingsDto> {
    return toTenantSettings(await this.read(actor.accountId));
  }

  /** Omitted or null fields are left unchanged. */
  async updateTenantSettings(actor: Principal, dto: TenantSettingsInputDto): Promise<TenantSettingsDto> {
    const changes: Change[] = [];
    for (const field of [
      'auditLogEnabled',
      'hasSupportAccess',
      'useAIBIUserInterface',
      'maintenanceWindowEnabled',
      'maintenanceWindowDay',
      'maintenanceWindowTime',
      'oidcEnabled',
    ] as const) {
      const value = dto[field];
      if (value !== undefined && value !== null) changes.push([field, value]);
    }
    return toTenantSettings(await this.write(actor.accountId, changes));
  }

  async getAppConfig(actor: Principal): Promise<AppConfigDto> {
    return toAppConfig(await this.read(actor.accountId));
  }

  /**
   * Booleans: omitted or null leaves them unchanged. Objects: omitted leaves them, null removes
   * them, an object replaces the stored one as a whole.
   */
  async updateAppConfig(actor: Principal, dto: AppConfigInputDto): Promise<AppConfigDto> {
    const changes: Change[] = [];
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
    const [row] = await queryRows<SettingsRow>(
      this.dataSource,
      `SELECT ${SELECT_COLUMNS} FROM tenant_settings s WHERE s.account_id = $1`,
      [accountId],
    );
    return row ?? DEFAULTS;
  }

  private async write(accountId: number, changes: Change[]): Promise<SettingsRow> {
    if (changes.length === 0) return this.read(accountId);
    const params: unknown[] = [accountId];
    const columns = ['account_id'];
    const values = ['$1'];
    const updates: string[] = [];
    for (const [field, value] of changes) {
      const [column, type] = FIELDS[field];
      columns.push(column);
      values.push(`$${params.push(value)}::${type}`);
      updates.push(`${column} = EXCLUDED.${column}`);
    }
    const audit = changes.find(([field]) => field === 'auditLogEnabled');
    if (audit) {
      // Stamped when the audit log turns from off to on; kept when it is switched off.
      columns.push('audit_log_enabled_at');
      values.push(`CASE WHEN $${params.push(audit[1])}::boolean THEN now() END`);
      updates.push(
        `audit_log_enabled_at = CASE WHEN EXCLUDED.audit_log_enabled AND NOT s.audit_log_enabled
           THEN now() ELSE s.audit_log_enabled_at END`,
      );
    }
    const [row] = await queryRows<SettingsRow>(
      this.dataSource,
      `INSERT INTO tenant_settings AS s (${columns.join(', ')}) VALUES (${values.join(', ')})
       ON CONFLICT (account_id) DO UPDATE SET ${updates.join(', ')}, updated_at = now()
       RETURNING ${SELECT_COLUMNS}`,
      params,
    );
    return row;
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
