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
import { Deployment } from '../../deployments/entities/deployment.entity.js';

/**
 * Where a deployment's dbt project lives: a git repository, the branch syncs read by default,
 * and the project's directory in it. Credentials are sealed (`SecretBoxService`) for the
 * account, the deployment and the repository's origin, and never leave the service.
 */
@Entity('dbt_integrations')
export class DbtIntegration {
  @PrimaryColumn({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_dbt_integrations_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'integer' }) accountId: number;

  /** An absolute URL without credentials, whose transport is in `DBT_GIT_PROTOCOLS`. */
  @Column({ type: 'text' }) repositoryUrl: string;

  @Column({ type: 'varchar', length: 255 }) branch: string;

  /** The dbt project's directory in the repository (`/`, `/analytics`). */
  @Column({ type: 'varchar', length: 1024, default: '/' }) projectRoot: string;

  /** `{username, token}` as JSON, sealed; null without credentials. */
  @Column({ type: 'text', nullable: true }) credentialsSealed: string | null;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
