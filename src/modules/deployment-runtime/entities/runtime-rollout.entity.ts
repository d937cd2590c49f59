import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  UpdateDateColumn,
  type Relation,
} from 'typeorm';
import { ModelEnvironment } from '../../data-model/entities/model-environment.entity.js';
import { Deployment } from '../../deployments/entities/deployment.entity.js';

/**
 * The deploy state of one environment run on the cluster: `deploying` from the apply that changed
 * its Deployment until the cluster reports every replica updated and available (`deployed`) or
 * the rollout stuck (`failed`, with the Deployment condition's message as `reason`). It goes with
 * its environment.
 */
@Entity('runtime_rollouts')
@Index('ix_runtime_rollouts_deployment', ['deploymentId'])
@Check('ck_runtime_rollouts_status', `"status" IN ('deploying', 'deployed', 'failed')`)
export class RuntimeRollout {
  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'PK_runtime_rollouts' }) environmentId: number;

  @ManyToOne(() => ModelEnvironment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'environment_id', foreignKeyConstraintName: 'fk_runtime_rollouts_environment' })
  environment?: Relation<ModelEnvironment>;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_runtime_rollouts_deployment' })
  deployment?: Relation<Deployment>;

  /** The name of the environment's Deployment (and Service) on the cluster. */
  @Column({ type: 'varchar', length: 63 }) objectName: string;

  @Column({ type: 'varchar', length: 16 }) status: string;

  @Column({ type: 'text', nullable: true }) reason: string | null;

  /** The commit and version the last apply asked for. */
  @Column({ type: 'varchar', length: 64, nullable: true }) commitSha: string | null;

  @Column({ type: 'varchar', length: 32, nullable: true }) version: string | null;

  /** The Deployment's `metadata.generation` after the last apply; its status must catch up. */
  @Column({ type: 'bigint', nullable: true }) objectGeneration: string | null;

  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
