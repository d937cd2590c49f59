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
import { Account } from '../tenancy/account.entity.js';
import { JobRun } from './entities/job-run.entity.js';

export type OutboxStatus = 'pending' | 'dispatched' | 'done' | 'failed';

/**
 * A job recorded in the same transaction as the write that caused it. The relay hands pending
 * rows to the queue, so a job is never lost when Redis is down between commit and enqueue, and
 * hands `dispatched` rows over again once their lease runs out (Redis lost them, or their worker
 * died).
 */
@Entity('job_outbox')
@Index('ix_job_outbox_pending', ['status', 'availableAt'])
@Index('ix_job_outbox_dispatched', ['leaseUntil'], { where: `status = 'dispatched'` })
@Index('ux_job_outbox_dedupe', ['dedupeKey'], { unique: true, where: `status IN ('pending', 'dispatched')` })
@Index('ix_job_outbox_run', ['runId'])
@Index('ix_job_outbox_account', ['accountId'])
export class OutboxJob {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;

  @Column({ type: 'varchar', length: 64 }) queue: string;

  @Column({ type: 'varchar', length: 64 }) name: string;

  /**
   * The account the work belongs to; null for platform work (and for jobs finished before the
   * column existed). A worker runs at most its share of one account's jobs of a name at once.
   */
  @Column({ type: 'integer', nullable: true }) accountId: number | null;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_job_outbox_account' })
  account?: Relation<Account>;

  @Column({ type: 'jsonb' }) payload: Record<string, unknown>;

  @Column({ type: 'varchar', length: 16, default: 'pending' }) status: OutboxStatus;

  @Column({ type: 'integer', default: 0 }) attempts: number;

  @Column({ type: 'text', nullable: true }) lastError: string | null;

  @Column({ type: 'timestamptz', default: () => 'now()' }) availableAt: Date;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true }) dispatchedAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true }) completedAt: Date | null;

  /** While `dispatched`: until when the queue holds it; renewed by the worker running it. */
  @Column({ type: 'timestamptz', nullable: true }) leaseUntil: Date | null;

  /** How many times it was handed to the queue; numbers the queue job id of each hand-over. */
  @Column({ type: 'integer', default: 0 }) dispatches: number;

  /**
   * Of those hand-overs, how many deferred the job (its account held its share): they are not
   * losses, so `dispatches - deferrals` is what fails a row the queue keeps losing.
   */
  @Column({ type: 'integer', default: 0 }) deferrals: number;

  /** The run it works on (jobs with run records), else null. */
  @Column({ type: 'bigint', nullable: true }) runId: string | null;

  @ManyToOne(() => JobRun, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'run_id', foreignKeyConstraintName: 'fk_job_outbox_run' })
  run?: Relation<JobRun>;

  /** While pending or dispatched, no other job has the same key: the same work is queued once. */
  @Column({ type: 'varchar', length: 255, nullable: true }) dedupeKey: string | null;
}
