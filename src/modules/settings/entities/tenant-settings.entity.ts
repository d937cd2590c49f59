import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  UpdateDateColumn,
  type Relation,
} from 'typeorm';
import { Account } from '../../../core/tenancy/account.entity.js';

/**
 * One row per account holding its tenant settings and its app config. A missing row means every
 * default; rows are only written by updates. The audit log reads `audit_log_enabled`.
 */
@Entity('tenant_settings')
@Check(
  'ck_tenant_settings_maintenance_day',
  `maintenance_window_day IN ('monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday')`,
)
@Check('ck_tenant_settings_maintenance_time', `maintenance_window_time ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$'`)
export class TenantSettings {
  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'pk_tenant_settings' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_tenant_settings_account' })
  account?: Relation<Account>;

  @Column({ type: 'boolean', default: false }) auditLogEnabled: boolean;

  /** When the audit log was last switched on; kept when it is switched off again. */
  @Column({ type: 'timestamptz', nullable: true }) auditLogEnabledAt: Date | null;

  @Column({ type: 'boolean', default: false }) hasSupportAccess: boolean;

  @Column({ type: 'boolean', default: false, name: 'use_aibi_user_interface' }) useAIBIUserInterface: boolean;

  @Column({ type: 'boolean', default: false }) maintenanceWindowEnabled: boolean;

  @Column({ type: 'varchar', length: 9, default: 'sunday' }) maintenanceWindowDay: string;

  /** `HH:MM`, 24-hour. */
  @Column({ type: 'varchar', length: 5, default: '02:00' }) maintenanceWindowTime: string;

  @Column({ type: 'boolean', default: false }) oidcEnabled: boolean;

  @Column({ type: 'jsonb', nullable: true }) appTheme: Record<string, unknown> | null;

  @Column({ type: 'boolean', default: false }) applyThemeGlobally: boolean;

  @Column({ type: 'jsonb', nullable: true }) creatorMode: Record<string, unknown> | null;

  @Column({ type: 'jsonb', nullable: true }) embedding: Record<string, unknown> | null;

  @Column({ type: 'boolean', default: false }) restrictDataDownload: boolean;

  @Column({ type: 'boolean', default: false }) sheetsAgentChatEnabled: boolean;

  @Column({ type: 'jsonb', nullable: true }) sheetsUi: Record<string, unknown> | null;

  @Column({ type: 'jsonb', nullable: true }) timezoneSettings: Record<string, unknown> | null;

  /** Whether embed users may run reports' Python (`POST /embed/dashboard/{publicId}/python-run`). */
  @Column({ type: 'boolean', default: false }) pythonAnalysisEnabled: boolean;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
