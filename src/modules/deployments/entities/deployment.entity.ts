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
  UpdateDateColumn,
} from 'typeorm';
import { Account } from '../../../core/tenancy/account.entity.js';

/** A deployment: the root resource that workspace content and the data model hang from. */
@Entity('deployments')
@Index('ix_deployments_account_id', ['accountId', 'id'])
@Check('ck_deployments_required_approvals', `deploy_branch_required_approvals BETWEEN 0 AND 10`)
export class Deployment {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_deployments_account' })
  account?: Relation<Account>;

  @Column({ type: 'varchar', length: 255 }) name: string;

  @Column({ type: 'varchar', length: 16 }) cloudProvider: string;

  @Column({ type: 'varchar', length: 64, nullable: true }) region: string | null;

  @Column({ type: 'varchar', length: 16, nullable: true }) creationMethod: string | null;

  @Column({ type: 'varchar', length: 16, nullable: true }) deployMode: string | null;

  @Column({ type: 'varchar', length: 16 }) creationStep: string;

  @Column({ type: 'boolean', default: true }) isManaged: boolean;

  @Column({ type: 'varchar', length: 64, nullable: true }) targetPlatform: string | null;

  @Column({ type: 'varchar', length: 16, default: 'latest' }) releaseChannel: string;

  /** The release held (without `v`), or null while the deployment follows its channel. */
  @Column({ type: 'varchar', length: 64, nullable: true }) releaseChannelVersion: string | null;

  /**
   * Set by `PUT`: true holds the deployment on `releaseChannelVersion`; false (the default) follows
   * the head of its channel, and `releaseChannelVersion` is null.
   */
  @Column({ type: 'boolean', default: false }) releaseChannelVersionHold: boolean;

  @Column({ type: 'varchar', length: 16, default: 'single' }) template: string;

  @Column({ type: 'jsonb', default: () => "'{}'" }) templateVariables: Record<string, unknown>;

  @Column({ type: 'varchar', length: 255, nullable: true }) defaultLaunchpadViewGroup: string | null;

  @Column({ type: 'text', array: true, nullable: true }) launchpadTabs: string[] | null;

  @Column({ type: 'varchar', length: 255, nullable: true }) customDomain: string | null;

  @Column({ type: 'varchar', length: 255, default: 'master' }) deployBranchName: string;

  @Column({ type: 'boolean', default: false }) deployBranchReadOnly: boolean;

  @Column({ type: 'boolean', default: true }) deployBranchMergeAllowed: boolean;

  /** The merge gate: approvals a merge into the deploy branch needs (0: none). */
  @Column({ type: 'integer', default: 0 }) deployBranchRequiredApprovals: number;

  /** The merge gate: a merge into the deploy branch may not break stored content. */
  @Column({ type: 'boolean', default: false }) deployBranchBlockNewBrokenContent: boolean;

  @Column({ type: 'varchar', length: 1024, default: '/' }) deployProjectRoot: string;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
