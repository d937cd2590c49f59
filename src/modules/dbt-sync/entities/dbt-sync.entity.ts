import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
} from 'typeorm';
import { JobRun } from '../../../core/queue/entities/job-run.entity.js';
import { Deployment } from '../../deployments/entities/deployment.entity.js';

/** A phase of a finished sync, timed on the clock of the worker that ran it. */
export interface SyncPhaseRecord {
  phase: string;
  outcome: 'ok' | 'failed';
  startedOffsetMs: number;
  durationMs: number;
}

/** What a sync found and made. */
export interface SyncStatsRecord {
  models: number;
  sources: number;
  macros: number;
  cubeCount: number;
  generatedFileCount: number;
  dbtVersion: string | null;
  manifestGeneratedAt: string | null;
}

/**
 * One dbt sync: what was asked (source, ref, output), the branch its cubes land on (named once,
 * at start, so a retried run writes the same branch), and, once its job finished the work, the
 * outcome. Its status, phase, error, lease and timestamps are its run's (`job_runs`, through
 * `run_id`): the `dbt-sync.run` job does the work.
 */
@Entity('dbt_syncs')
@Index('ux_dbt_syncs_run', ['runId'], { unique: true })
@Index('ix_dbt_syncs_deployment', ['deploymentId', 'runId'])
@Index('ux_dbt_syncs_branch', ['deploymentId', 'branchName'], { unique: true })
export class DbtSync {
  /** The `syncJobId` of the API. */
  @PrimaryColumn({ type: 'uuid' }) id: string;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_dbt_syncs_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'bigint' }) runId: string;

  @ManyToOne(() => JobRun, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'run_id', foreignKeyConstraintName: 'fk_dbt_syncs_run' })
  run?: Relation<JobRun>;

  /** Who started it (no foreign key: the record outlives the user, like an audit row). */
  @Column({ type: 'integer', nullable: true }) userId: number | null;

  @Column({ type: 'varchar', length: 320 }) authorEmail: string;

  /** `api` (this REST API); the reference's `manual`, `webhook`, `agent` are not produced here. */
  @Column({ type: 'varchar', length: 16 }) trigger: string;

  /** `git` or `manifest`. */
  @Column({ type: 'varchar', length: 16 }) source: string;

  /** `branch` or `files`. */
  @Column({ type: 'varchar', length: 16 }) output: string;

  /** The dbt repository's branch or tag read (source `git`), or the one named for a posted manifest. */
  @Column({ type: 'varchar', length: 255, nullable: true }) gitRef: string | null;

  /** The repository and project directory read (source `git`), as configured at start. */
  @Column({ type: 'text', nullable: true }) repositoryUrl: string | null;

  @Column({ type: 'varchar', length: 1024, nullable: true }) projectRoot: string | null;

  /** The Cube branch the new branch starts from (the deploy branch at start). */
  @Column({ type: 'varchar', length: 255 }) baseBranch: string;

  /** The Cube branch the generated cubes land on. */
  @Column({ type: 'varchar', length: 255 }) branchName: string;

  /** A posted manifest (gzip of its JSON) until the run ends. */
  @Column({ type: 'bytea', nullable: true }) manifestGz: Buffer | null;

  /**
   * Whether `manifestGz` holds the manifest as read when the sync started (`manifestToJson`), not
   * the posted JSON (rows stored before that form existed).
   */
  @Column({ type: 'boolean', default: false }) manifestRead: boolean;

  @Column({ type: 'jsonb', nullable: true }) stats: SyncStatsRecord | null;

  /** Per-phase timings of the attempt that ended the run; written when it ends. */
  @Column({ type: 'jsonb', nullable: true }) phases: SyncPhaseRecord[] | null;

  /** The commit made on the branch and the build recorded for it (output `branch`). */
  @Column({ type: 'varchar', length: 40, nullable: true }) commitSha: string | null;

  @Column({ type: 'integer', nullable: true }) buildId: number | null;

  /** Set in the unit of work that records the result: the work is done, a rerun does nothing. */
  @Column({ type: 'timestamptz', nullable: true }) doneAt: Date | null;

  /** `startedAt`: when the sync was asked for (the database's clock). */
  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  /** When its status last moved (start, each phase, the end): `updatedAt` of the status. */
  @Column({ type: 'timestamptz', default: () => 'now()' }) updatedAt: Date;
}
