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
import { Account } from '../../tenancy/account.entity.js';
import { JobRun } from './job-run.entity.js';

/**
 * A recurring job: fired by the outbox relay's tick (one claim of due rows, `FOR UPDATE SKIP
 * LOCKED`), never by a Bull repeatable job. `owner` is the domain key of what it belongs to.
 */
@Entity('job_schedules')
@Index('ix_job_schedules_due', ['nextRunAt'], { where: 'enabled' })
@Index('ix_job_schedules_owner', ['owner', 'id'])
@Index('ix_job_schedules_account', ['accountId'])
export class JobSchedule {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;

  @Column({ type: 'integer', nullable: true }) accountId: number | null;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_job_schedules_account' })
  account?: Relation<Account>;

  @Column({ type: 'varchar', length: 128 }) owner: string;

  @Column({ type: 'varchar', length: 64 }) job: string;

  /** Five fields (minute hour day-of-month month day-of-week), or six with seconds first. */
  @Column({ type: 'varchar', length: 128 }) cron: string;

  /** IANA time zone the cron is read in. */
  @Column({ type: 'varchar', length: 64, default: 'UTC' }) timezone: string;

  @Column({ type: 'jsonb', default: () => "'{}'" }) payload: Record<string, unknown>;

  @Column({ type: 'boolean', default: true }) enabled: boolean;

  @Column({ type: 'timestamptz' }) nextRunAt: Date;

  @Column({ type: 'timestamptz', nullable: true }) lastRunAt: Date | null;

  @Column({ type: 'bigint', nullable: true }) lastRunId: string | null;

  @ManyToOne(() => JobRun, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'last_run_id', foreignKeyConstraintName: 'fk_job_schedules_last_run' })
  lastRun?: Relation<JobRun>;

  /** Why the last firing failed (its job is no longer declared...), else null. */
  @Column({ type: 'text', nullable: true }) lastError: string | null;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
