import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  OneToOne,
  PrimaryColumn,
  type Relation,
} from 'typeorm';
import { Deployment } from '../../deployments/entities/deployment.entity.js';

/**
 * The git-host repository a deployment's model is connected to: commits are pushed to it, `pull`
 * fetches from it. The clone URL comes from the git host's API; no credential is stored (an
 * installation token is asked for on each use).
 */
@Entity('model_remotes')
export class ModelRemote {
  @PrimaryColumn({ type: 'integer' }) deploymentId: number;

  @OneToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_model_remotes_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'varchar', length: 16 }) provider: string;

  @Column({ type: 'bigint' }) installationId: string;

  /** `owner/repo`. */
  @Column({ type: 'varchar', length: 255 }) repository: string;

  @Column({ type: 'text' }) url: string;

  @CreateDateColumn({ type: 'timestamptz' }) connectedAt: Date;
}
