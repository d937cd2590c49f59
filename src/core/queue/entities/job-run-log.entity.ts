import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { JobRun } from './job-run.entity.js';

/** A line of a run's log, written by its handler (`ctx.log`), fenced by the claim that wrote it. */
@Entity('job_run_logs')
@Index('ix_job_run_logs_run', ['runId', 'id'])
export class JobRunLog {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;

  @Column({ type: 'bigint' }) runId: string;

  @ManyToOne(() => JobRun, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'run_id', foreignKeyConstraintName: 'fk_job_run_logs_run' })
  run?: Relation<JobRun>;

  /** The claim (run attempt) that wrote it. */
  @Column({ type: 'integer' }) attempt: number;

  @Column({ type: 'timestamptz', default: () => 'now()' }) at: Date;

  @Column({ type: 'varchar', length: 8, default: 'info' }) level: string;

  @Column({ type: 'text' }) message: string;

  /** The run's phase when the line was written; null before its first phase. */
  @Column({ type: 'varchar', length: 64, nullable: true }) phase: string | null;

  /** For a line that closes a step: how long the step took, ms. */
  @Column({ type: 'integer', nullable: true }) durationMs: number | null;
}
