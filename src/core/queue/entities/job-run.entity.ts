import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { Account } from '../../tenancy/account.entity.js';

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';

/**
 * One run of a job users watch (a build, a sync): its status, phase, progress, timestamps and
 * error, plus the lease that finds a run whose worker died. The job that runs it travels through
 * `job_outbox` (transport only); the domain row (a `deployment_builds` row) points here.
 */
@Entity('job_runs')
@Index('ux_job_runs_dedupe', ['dedupeKey'], { unique: true, where: `status IN ('queued', 'running')` })
@Index('ix_job_runs_running', ['leaseUntil'], { where: `status = 'running'` })
@Index('ix_job_runs_owner', ['owner', 'id'])
@Index('ix_job_runs_account', ['accountId'])
export class JobRun {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;

  /** The account the work belongs to; null for platform work. */
  @Column({ type: 'integer', nullable: true }) accountId: number | null;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_job_runs_account' })
  account?: Relation<Account>;

  @Column({ type: 'varchar', length: 64 }) job: string;

  /** The domain key of what the run belongs to (`deployment:42`): listing and clean-up. */
  @Column({ type: 'varchar', length: 128, nullable: true }) owner: string | null;

  /** While queued or running, no other run has the same key (see `dedupeKey` of a job). */
  @Column({ type: 'varchar', length: 255, nullable: true }) dedupeKey: string | null;

  @Column({ type: 'jsonb' }) payload: Record<string, unknown>;

  @Column({ type: 'varchar', length: 16, default: 'queued' }) status: RunStatus;

  @Column({ type: 'varchar', length: 64, nullable: true }) phase: string | null;

  @Column({ type: 'integer', nullable: true }) progressCurrent: number | null;

  @Column({ type: 'integer', nullable: true }) progressTotal: number | null;

  /** How many times a worker claimed it; also the fencing token of the current claim. */
  @Column({ type: 'integer', default: 0 }) attempts: number;

  /** Claims after which a run whose workers keep dying is failed instead of resumed. */
  @Column({ type: 'integer' }) maxAttempts: number;

  /** While `running`: until when the worker that claimed it holds it (renewed as it runs). */
  @Column({ type: 'timestamptz', nullable: true }) leaseUntil: Date | null;

  /** Set by a cancellation request; the handler stops at its next `ctx.throwIfCancelled()`. */
  @Column({ type: 'timestamptz', nullable: true }) cancelRequestedAt: Date | null;

  @Column({ type: 'text', nullable: true }) error: string | null;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true }) startedAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true }) finishedAt: Date | null;
}
