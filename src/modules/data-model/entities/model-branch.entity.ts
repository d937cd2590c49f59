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
import { Deployment } from '../../deployments/entities/deployment.entity.js';

/**
 * What the API knows of a branch beyond its git ref: its parent (where `merge` goes), whether
 * it is the deploy branch, a shared branch or someone's personal dev branch, and its staging
 * toggle. The ref (`refs/heads/<name>` of the deployment's repository) is the branch; this row
 * mirrors it for listing and never stands in for it.
 */
@Entity('model_branches')
@Index('ux_model_branches_name', ['deploymentId', 'name'], { unique: true })
export class ModelBranch {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_model_branches_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'varchar', length: 255 }) name: string;

  @Column({ type: 'varchar', length: 255, nullable: true }) parentName: string | null;

  /** `deploy`, `shared` or `dev` (a personal dev-mode branch of `ownerUserId`). */
  @Column({ type: 'varchar', length: 8 }) kind: string;

  @Column({ type: 'integer', nullable: true }) ownerUserId: number | null;

  @Column({ type: 'boolean', default: false }) stagingEnabled: boolean;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}
