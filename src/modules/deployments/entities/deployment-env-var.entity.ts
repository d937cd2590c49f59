import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
  UpdateDateColumn,
} from 'typeorm';
import { Deployment } from './deployment.entity.js';

/**
 * An environment variable of a deployment. The value is sealed (`SecretBoxService`) for its
 * account, deployment and name: it is never stored in clear, and a copy in another row does not
 * open.
 */
@Entity('deployment_env_vars')
export class DeploymentEnvVar {
  @PrimaryColumn({ type: 'integer' }) deploymentId: number;

  @PrimaryColumn({ type: 'varchar', length: 128 }) name: string;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_deployment_env_vars_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'text' }) valueSealed: string;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
