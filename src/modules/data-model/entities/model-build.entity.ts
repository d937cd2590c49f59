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
import { JobRun } from '../../../core/queue/entities/job-run.entity.js';
import { Deployment } from '../../deployments/entities/deployment.entity.js';

/**
 * One build of a deployment's branch at one commit: the model compiled as the runtime would.
 * Its progress, log, lease and timestamps are its run's (`job_runs`, through `run_id`): the
 * `deployment.build` job runs it and records the verdict here (`built` or `failed`).
 */
@Entity('deployment_builds')
@Index('ix_deployment_builds_deployment', ['deploymentId', 'id'])
@Index('ux_deployment_builds_run', ['runId'], { unique: true })
@Index('ix_deployment_builds_branch', ['deploymentId', 'branch', 'id'])
export class ModelBuild {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_deployment_builds_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'varchar', length: 255 }) branch: string;

  @Column({ type: 'varchar', length: 32 }) trigger: string;

  /** The commit built (`lastHash`); null for builds recorded before the data model was on git. */
  @Column({ type: 'varchar', length: 40, nullable: true }) commitSha: string | null;

  /** A hash of the built files (`filesHash`), set when the build ran. */
  @Column({ type: 'varchar', length: 40, nullable: true }) filesHash: string | null;

  /** `built` or `failed`; null until the build has run. */
  @Column({ type: 'varchar', length: 16, nullable: true }) outcome: string | null;

  @Column({ type: 'text', nullable: true }) errorText: string | null;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @Column({ type: 'bigint' }) runId: string;

  @ManyToOne(() => JobRun, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'run_id', foreignKeyConstraintName: 'fk_deployment_builds_run' })
  run?: Relation<JobRun>;
}
