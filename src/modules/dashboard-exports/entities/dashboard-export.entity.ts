import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { JobRun } from '../../../core/queue/entities/job-run.entity.js';
import { Deployment } from '../../deployments/entities/deployment.entity.js';
import { User } from '../../users/entities/user.entity.js';

/** The filters, time grains and field switchers an export renders with, as the notifications take them. */
export interface ExportOverridesRecord {
  filters?: unknown[] | null;
  timeGrains?: unknown[] | null;
  memberSwitchers?: unknown[] | null;
}

/**
 * One export of a published dashboard to PNG or PDF: what was asked (the dashboard, the format,
 * the overrides, the security context the reports are read under and whom it stands for), the
 * user who started it (the only one who sees it), and, once its `dashboard-export.render` job
 * rendered it, the file. Its status, progress and error are its run's (`job_runs`, through
 * `run_id`). Kept until `expires_at` (DASHBOARD_EXPORT_TTL_SECONDS after it was started), then
 * deleted with its run by the `dashboard-export.prune` schedule.
 */
@Entity('dashboard_exports')
@Index('ux_dashboard_exports_run', ['runId'], { unique: true })
@Index('ix_dashboard_exports_account', ['accountId', 'expiresAt'])
@Index('ix_dashboard_exports_expires', ['expiresAt'])
@Check('ck_dashboard_exports_format', `format IN ('png', 'pdf')`)
@Check('ck_dashboard_exports_subject', `subject_type IN ('USER', 'EMBED_USER')`)
export class DashboardExport {
  /** The `jobId` of the API: random, never a sequence. */
  @PrimaryColumn({ type: 'uuid' }) id: string;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_dashboard_exports_deployment' })
  deployment?: Relation<Deployment>;

  /** The published dashboard's id (no foreign key: the render reads it again, and fails if it is gone). */
  @Column({ type: 'integer' }) dashboardId: number;

  /** Who started it: the only user who may poll and download it. */
  @Column({ type: 'integer' }) userId: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_dashboard_exports_user' })
  user?: Relation<User>;

  @Column({ type: 'bigint' }) runId: string;

  @ManyToOne(() => JobRun, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'run_id', foreignKeyConstraintName: 'fk_dashboard_exports_run' })
  run?: Relation<JobRun>;

  /** `png` or `pdf`. */
  @Column({ type: 'varchar', length: 8 }) format: string;

  @Column({ type: 'jsonb' }) overrides: ExportOverridesRecord;

  /** Whom the render stands for: `USER` (a console user) or `EMBED_USER`. */
  @Column({ type: 'varchar', length: 16 }) subjectType: string;

  /** The console user's or the embed user's id (no foreign key: a record of whom it was for). */
  @Column({ type: 'integer' }) subjectId: number;

  /** The security context the reports are read under (for this render only). */
  @Column({ type: 'jsonb' }) securityContext: Record<string, unknown>;

  /** The rendered file, once the job stored it (written once). */
  @Column({ type: 'bytea', nullable: true }) content: Buffer | null;

  @Column({ type: 'varchar', length: 64, nullable: true }) contentType: string | null;

  @Column({ type: 'timestamptz' }) createdAt: Date;

  @Column({ type: 'timestamptz' }) expiresAt: Date;

  @Column({ type: 'timestamptz', nullable: true }) completedAt: Date | null;
}
