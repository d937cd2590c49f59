import {
  Check,
  CreateDateColumn,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { Deployment } from '../../deployments/entities/deployment.entity.js';
import { ModelBranch } from './model-branch.entity.js';

/**
 * An environment a deployment's data is served in, with the stable id that data API tokens are
 * issued for: one production environment per deployment (it serves whichever branch is the deploy
 * branch), one staging environment per shared branch while its staging toggle is on, and one
 * development environment per personal dev branch. A staging or development environment goes
 * with its branch (the row, and its tokens, are deleted when the branch is, or when the staging
 * toggle is turned off); turned on again, the branch gets a new environment with a new id.
 */
@Entity('environments')
@Index('ux_environments_production', ['deploymentId'], { unique: true, where: `"type" = 'production'` })
@Index('ux_environments_branch', ['branchId'], { unique: true })
@Check('ck_environments_branch', `("type" = 'production') = ("branch_id" IS NULL)`)
export class ModelEnvironment {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_environments_deployment' })
  deployment?: Relation<Deployment>;

  /** `production`, `staging` or `development`. */
  @Column({ type: 'varchar', length: 16 }) type: string;

  /** The branch a staging or development environment serves; null for production. */
  @Column({ type: 'integer', nullable: true }) branchId: number | null;

  @ManyToOne(() => ModelBranch, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'branch_id', foreignKeyConstraintName: 'fk_environments_branch' })
  branch?: Relation<ModelBranch>;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}
