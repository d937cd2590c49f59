import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import type { AppConfigDto } from './dto/app-config.dto.js';
import type { Weekday } from './dto/tenant-settings.dto.js';

/** The `tenant_settings` row of an account, by field. */
export interface SettingsRow {
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
  pythonAnalysisEnabled: boolean;
}

/** A field to set and its value (jsonb fields as JSON text, or null). */
export type SettingsChange = [field: keyof SettingsRow, value: unknown];

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
  pythonAnalysisEnabled: ['python_analysis_enabled', 'boolean'],
};

const SELECT_COLUMNS = Object.entries(FIELDS)
  .map(([field, [column]]) => `s.${column} AS "${field}"`)
  .join(', ');

/** SQL over `tenant_settings`: one row per account, written only by updates. */
@Injectable()
export class SettingsRepository {
  constructor(private readonly db: Database) {}

  /** The account's row, or undefined when it has none (every default). */
  find(accountId: number): Promise<SettingsRow | undefined> {
    return this.db.one<SettingsRow>(
      `SELECT ${SELECT_COLUMNS} FROM tenant_settings s WHERE s.account_id = :accountId`,
      { accountId },
    );
  }

  /**
   * Sets only the fields given, in one `INSERT ... ON CONFLICT DO UPDATE`, so concurrent updates
   * of different fields all land. `audit_log_enabled_at` is stamped when the audit log turns from
   * off to on and kept when it is switched off.
   */
  async upsert(accountId: number, changes: readonly SettingsChange[]): Promise<SettingsRow> {
    const params: Record<string, unknown> = { accountId };
    const columns = ['account_id'];
    const values = [':accountId'];
    const updates: string[] = [];
    for (const [field, value] of changes) {
      const [column, type] = FIELDS[field];
      params[field] = value;
      columns.push(column);
      values.push(`:${field}::${type}`);
      updates.push(`${column} = EXCLUDED.${column}`);
    }
    if (changes.some(([field]) => field === 'auditLogEnabled')) {
      columns.push('audit_log_enabled_at');
      values.push(`CASE WHEN :auditLogEnabled::boolean THEN now() END`);
      updates.push(
        `audit_log_enabled_at = CASE WHEN EXCLUDED.audit_log_enabled AND NOT s.audit_log_enabled
           THEN now() ELSE s.audit_log_enabled_at END`,
      );
    }
    const row = await this.db.one<SettingsRow>(
      `INSERT INTO tenant_settings AS s (${columns.join(', ')}) VALUES (${values.join(', ')})
       ON CONFLICT (account_id) DO UPDATE SET ${updates.join(', ')}, updated_at = now()
       RETURNING ${SELECT_COLUMNS}`,
      params,
    );
    return row!;
  }
}
