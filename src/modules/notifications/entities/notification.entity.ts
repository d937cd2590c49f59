import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
  UpdateDateColumn,
} from 'typeorm';
import { Deployment } from '../../deployments/entities/deployment.entity.js';
import { Account } from '../../../core/tenancy/account.entity.js';
import { Dashboard } from '../../workspace/entities/dashboard.entity.js';

/**
 * A scheduled notification: a published dashboard run on a schedule and mailed to its recipients.
 * The schedule is kept as asked (`schedule_type` and its fields, or `custom_cron`) and as the cron
 * it makes (`cron_expression`); it fires through a `job_schedules` row owned by `notification:<id>`.
 */
@Entity('notifications')
@Index('ix_notifications_deployment', ['deploymentId', 'id'])
@Index('ix_notifications_dashboard', ['dashboardId'])
export class Notification {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'PK_notifications' }) id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_notifications_account' })
  account?: Relation<Account>;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_notifications_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'integer' }) dashboardId: number;

  @ManyToOne(() => Dashboard, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'dashboard_id', foreignKeyConstraintName: 'fk_notifications_dashboard' })
  dashboard?: Relation<Dashboard>;

  /** HOURLY, DAILY, WEEKLY, MONTHLY or CUSTOM. */
  @Column({ type: 'varchar', length: 16 }) scheduleType: string;

  @Column({ type: 'smallint', nullable: true }) minute: number | null;

  @Column({ type: 'smallint', nullable: true }) hour: number | null;

  @Column({ type: 'smallint', nullable: true }) dayOfWeek: number | null;

  @Column({ type: 'smallint', nullable: true }) dayOfMonth: number | null;

  @Column({ type: 'varchar', length: 255, nullable: true }) customCron: string | null;

  @Column({ type: 'varchar', length: 255 }) cronExpression: string;

  @Column({ type: 'varchar', length: 64, default: 'UTC' }) timezone: string;

  @Column({ type: 'boolean', default: true }) isEnabled: boolean;

  @Column({ type: 'boolean', default: true }) notificationEnabled: boolean;

  /** `pdf` or `png`. */
  @Column({ type: 'varchar', length: 8, default: 'pdf' }) notificationFormat: string;

  @Column({ type: 'boolean', default: false }) notificationAiSummary: boolean;

  @Column({ type: 'jsonb', nullable: true }) filters: unknown[] | null;

  @Column({ type: 'jsonb', nullable: true }) timeGrains: unknown[] | null;

  @Column({ type: 'jsonb', nullable: true }) memberSwitchers: unknown[] | null;

  /**
   * Set while paused (`POST .../pause`): the schedule does not fire and the deliveries of its
   * scheduled runs wait (`held`) until `POST .../resume`. Independent of `isEnabled`.
   */
  @Column({ type: 'timestamptz', precision: 3, nullable: true }) pausedAt: Date | null;

  /** Who created it (no foreign key: the notification outlives its author). */
  @Column({ type: 'integer', nullable: true }) createdBy: number | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
