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
import { Deployment } from './deployment.entity.js';

/**
 * One build of a deployment's branch. Its status, phase, progress, log, lease and timestamps are
 * its run's (`job_runs`, through `run_id`): the `deployment.build` job runs it.
 */
@Entity('deployment_builds')
@Index('ix_deployment_builds_deployment', ['deploymentId', 'id'])
@Index('ux_deployment_builds_run', ['runId'], { unique: true })
export class DeploymentBuild {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_deployment_builds_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'varchar', length: 255 }) branch: string;

  @Column({ type: 'varchar', length: 32 }) trigger: string;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @Column({ type: 'bigint' }) runId: string;

  @ManyToOne(() => JobRun, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'run_id', foreignKeyConstraintName: 'fk_deployment_builds_run' })
  run?: Relation<JobRun>;
}
