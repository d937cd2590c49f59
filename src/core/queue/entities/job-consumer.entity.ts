import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * A worker process that consumes a queue, as it last said so: one row per process and queue,
 * written every third of `JOB_LEASE_SECONDS` while the process takes jobs from that queue (its
 * Redis connection ready). A row not renewed within the lease is a consumer gone; readiness
 * reports a queue whose jobs wait with no live consumer. Rows are the database's clock, so
 * workers on several hosts compare.
 */
@Entity('job_consumers')
@Index('ix_job_consumers_queue', ['queue', 'lastSeen'])
export class JobConsumer {
  /** A random id per process start. */
  @PrimaryColumn({ type: 'varchar', length: 64, primaryKeyConstraintName: 'pk_job_consumers' })
  workerId: string;

  @PrimaryColumn({ type: 'varchar', length: 64, primaryKeyConstraintName: 'pk_job_consumers' })
  queue: string;

  /** For the operator: the host name and process id of the worker. */
  @Column({ type: 'varchar', length: 255 }) host: string;

  @Column({ type: 'integer' }) pid: number;

  @Column({ type: 'timestamptz', default: () => 'now()' }) startedAt: Date;

  @Column({ type: 'timestamptz', default: () => 'now()' }) lastSeen: Date;
}
