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
import { Deployment } from './deployment.entity.js';

export type BuildStatus = 'queued' | 'running' | 'succeeded' | 'failed';

/** One build of a deployment's branch, run by the `builds` queue. */
@Entity('deployment_builds')
@Index('ix_deployment_builds_deployment', ['deploymentId', 'id'])
@Index('ix_deployment_builds_running', ['leaseUntil'], { where: `status = 'running'` })
export class DeploymentBuild {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_deployment_builds_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'varchar', length: 255 }) branch: string;

  @Column({ type: 'varchar', length: 16 }) status: BuildStatus;

  @Column({ type: 'varchar', length: 32 }) trigger: string;

  @Column({ type: 'text', nullable: true }) error: string | null;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true }) startedAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true }) finishedAt: Date | null;

  /** While `running`: until when the worker that claimed it holds it (renewed as it runs). */
  @Column({ type: 'timestamptz', nullable: true }) leaseUntil: Date | null;

  /** How many times a worker claimed it; also the fencing token of the current claim. */
  @Column({ type: 'integer', default: 0 }) attempts: number;
}
