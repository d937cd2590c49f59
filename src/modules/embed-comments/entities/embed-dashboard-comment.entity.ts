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
import { EmbedTenant } from '../../embedding/entities/embed-tenant.entity.js';
import { EmbedUser } from '../../embedding/entities/embed-user.entity.js';
import { Dashboard } from '../../workspace/entities/dashboard.entity.js';

/**
 * A comment on a published dashboard, inside one embed tenant's partition: a thread's first
 * comment (`parentId` null, which alone carries the resolved state) or one of its replies. A
 * deleted comment keeps its row with `removedAt` set and its text wiped. It goes with its
 * dashboard, tenant and account; a deleted author or resolver leaves the comment without one.
 */
@Entity('embed_dashboard_comments')
@Index('ix_embed_dashboard_comments_threads', ['dashboardId', 'tenantId', 'id'])
@Index('ix_embed_dashboard_comments_parent', ['parentId'])
@Index('ix_embed_dashboard_comments_tenant', ['tenantId'])
@Index('ix_embed_dashboard_comments_author', ['authorId'])
@Index('ix_embed_dashboard_comments_resolver', ['resolvedBy'])
@Check('ck_embed_dashboard_comments_body', `char_length(body) <= 10000`)
@Check('ck_embed_dashboard_comments_resolved', `parent_id IS NULL OR resolved_at IS NULL`)
export class EmbedDashboardComment {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'pk_embed_dashboard_comments' }) id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_embed_dashboard_comments_account' })
  account?: Relation<Account>;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_embed_dashboard_comments_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'integer' }) dashboardId: number;

  @ManyToOne(() => Dashboard, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'dashboard_id', foreignKeyConstraintName: 'fk_embed_dashboard_comments_dashboard' })
  dashboard?: Relation<Dashboard>;

  @Column({ type: 'integer' }) tenantId: number;

  @ManyToOne(() => EmbedTenant, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id', foreignKeyConstraintName: 'fk_embed_dashboard_comments_tenant' })
  tenant?: Relation<EmbedTenant>;

  @Column({ type: 'integer', nullable: true }) authorId: number | null;

  @ManyToOne(() => EmbedUser, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'author_id', foreignKeyConstraintName: 'fk_embed_dashboard_comments_author' })
  author?: Relation<EmbedUser>;

  @Column({ type: 'integer', nullable: true }) parentId: number | null;

  @ManyToOne(() => EmbedDashboardComment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'parent_id', foreignKeyConstraintName: 'fk_embed_dashboard_comments_parent' })
  parent?: Relation<EmbedDashboardComment>;

  /** Stored as written (at most 10 000 characters); empty once deleted. */
  @Column({ type: 'text' }) body: string;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3, nullable: true }) editedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true }) removedAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true }) resolvedAt: Date | null;

  @Column({ type: 'integer', nullable: true }) resolvedBy: number | null;

  @ManyToOne(() => EmbedUser, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'resolved_by', foreignKeyConstraintName: 'fk_embed_dashboard_comments_resolver' })
  resolver?: Relation<EmbedUser>;
}
