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
import { Release } from './release.entity.js';

/**
 * What a deployment ran, from when: a row at creation, on every change of the version it runs
 * (a `PUT` of its channel, version or hold), and when a new head of the channel it follows is
 * released. Every row names a release of the catalogue.
 */
@Entity('deployment_versions')
@Index('ix_deployment_versions_deployment', ['deploymentId', 'id'])
export class DeploymentVersion {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_deployment_versions_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'varchar', length: 16 }) releaseChannel: string;

  @Column({ type: 'varchar', length: 32 }) version: string;

  @ManyToOne(() => Release)
  @JoinColumn([
    {
      name: 'release_channel',
      referencedColumnName: 'channel',
      foreignKeyConstraintName: 'fk_deployment_versions_release',
    },
    { name: 'version', referencedColumnName: 'version' },
  ])
  release?: Relation<Release>;

  @CreateDateColumn({ type: 'timestamptz' }) startedAt: Date;
}
