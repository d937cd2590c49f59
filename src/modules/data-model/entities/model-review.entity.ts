import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { Account } from '../../../core/tenancy/account.entity.js';
import { Deployment } from '../../deployments/entities/deployment.entity.js';
import { User } from '../../users/entities/user.entity.js';
import { ModelBranch } from './model-branch.entity.js';

/**
 * A review of a branch at one head commit (docs/data-model.md, "Reviews and the merge gate"):
 * `approve` or `request_changes`, with a comment. One per reviewer and head (a new review of the
 * same head replaces it); a review of an older head stays, dismissed. It goes with its branch's
 * row (so with the branch and the deployment), its reviewer and its account.
 */
@Entity('model_reviews')
@Index('ux_model_reviews_current', ['branchId', 'headCommit', 'reviewerUserId'], { unique: true })
@Index('ix_model_reviews_branch', ['branchId', 'id'])
@Index('ix_model_reviews_deployment', ['deploymentId'])
@Index('ix_model_reviews_reviewer', ['reviewerUserId'])
@Index('ix_model_reviews_account', ['accountId'])
@Check('ck_model_reviews_verdict', `verdict IN ('approve', 'request_changes')`)
@Check('ck_model_reviews_comment', `char_length(comment) <= 10000`)
export class ModelBranchReview {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'pk_model_reviews' }) id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_model_reviews_account' })
  account?: Relation<Account>;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_model_reviews_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'integer' }) branchId: number;

  @ManyToOne(() => ModelBranch, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'branch_id', foreignKeyConstraintName: 'fk_model_reviews_branch' })
  branch?: Relation<ModelBranch>;

  @Column({ type: 'varchar', length: 255 }) branchName: string;

  /** The branch's head commit when it was reviewed. */
  @Column({ type: 'varchar', length: 64 }) headCommit: string;

  @Column({ type: 'integer' }) reviewerUserId: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'reviewer_user_id', foreignKeyConstraintName: 'fk_model_reviews_reviewer' })
  reviewer?: Relation<User>;

  /** `approve` or `request_changes`. */
  @Column({ type: 'varchar', length: 16 }) verdict: string;

  /** At most 10 000 characters. */
  @Column({ type: 'text', nullable: true }) comment: string | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;
}
