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
import { JobRun } from '../../../core/queue/entities/job-run.entity.js';
import { Notification } from './notification.entity.js';

/**
 * One firing of a notification: the occurrence it is for (`scheduled_for`, unique per
 * notification, so a firing is rendered and mailed once however often its job runs) and the job
 * run that worked on it. A run asked for by hand (`trigger: manual`, run now) starts `queued`;
 * `rendering` until its deliveries are recorded, then `delivering`, and `finished` once every
 * delivery to a recipient has ended (`finished_at`, set once: `notification.run_finished`);
 * `failed` when it could mail none of its recipients, `skipped` when the schedule fires too often.
 */
@Entity('notification_runs')
@Index('ux_notification_runs_occurrence', ['notificationId', 'scheduledFor'], { unique: true })
export class NotificationRun {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'PK_notification_runs' }) id: string;

  @Column({ type: 'integer' }) notificationId: number;

  @ManyToOne(() => Notification, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'notification_id', foreignKeyConstraintName: 'fk_notification_runs_notification' })
  notification?: Relation<Notification>;

  @Column({ type: 'timestamptz', precision: 3 }) scheduledFor: Date;

  @Column({ type: 'bigint', nullable: true }) jobRunId: string | null;

  @ManyToOne(() => JobRun, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'job_run_id', foreignKeyConstraintName: 'fk_notification_runs_job_run' })
  jobRun?: Relation<JobRun>;

  @Column({ type: 'varchar', length: 16, default: 'rendering' }) status: string;

  @Column({ type: 'text', nullable: true }) error: string | null;

  /** `schedule` (fired by its schedule) or `manual` (run now). */
  @Column({ type: 'varchar', length: 16, default: 'schedule' }) trigger: string;

  /** Who ran it now (no foreign key: the history outlives the user). */
  @Column({ type: 'integer', nullable: true }) requestedBy: number | null;

  /** When every delivery to a recipient had ended; null before. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true }) finishedAt: Date | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
