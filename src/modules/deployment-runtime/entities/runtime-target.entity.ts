import {
  Column,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  UpdateDateColumn,
  type Relation,
} from 'typeorm';
import { Deployment } from '../../deployments/entities/deployment.entity.js';

/**
 * A deployment whose environments run on the cluster: `generation` counts the changes its cluster
 * objects must follow (bumped in the unit of work of each change), `appliedGeneration` the last
 * count a reconcile applied, so a reconcile queued for a change already applied does nothing.
 */
@Entity('runtime_targets')
export class RuntimeTarget {
  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'PK_runtime_targets' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_runtime_targets_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'bigint', default: 0 }) generation: string;

  @Column({ type: 'bigint', default: 0 }) appliedGeneration: string;

  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
