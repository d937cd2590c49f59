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
import { Account } from '../../../core/tenancy/account.entity.js';
import { EmbedTenant } from './embed-tenant.entity.js';
import { EmbedUser } from './embed-user.entity.js';

/**
 * An embed session: made by generate-session, exchanged once for an embed token, revocable at
 * any time (which also ends the token). Only the SHA-256 of the session id is stored.
 */
@Entity('embed_sessions')
@Index('uq_embed_sessions_hash', ['sessionHash'], { unique: true })
@Index('ix_embed_sessions_expiry', ['expiresAt'])
export class EmbedSession {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_embed_sessions_account' })
  account?: Relation<Account>;

  @Column({ type: 'integer' }) tenantId: number;

  @ManyToOne(() => EmbedTenant, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id', foreignKeyConstraintName: 'fk_embed_sessions_tenant' })
  tenant?: Relation<EmbedTenant>;

  @Column({ type: 'integer' }) embedUserId: number;

  @ManyToOne(() => EmbedUser, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'embed_user_id', foreignKeyConstraintName: 'fk_embed_sessions_user' })
  user?: Relation<EmbedUser>;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_embed_sessions_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'char', length: 64 }) sessionHash: string;

  /** What the session carries into its token: groups, settings, security context. */
  @Column({ type: 'jsonb' }) context: Record<string, unknown>;

  @Column({ type: 'integer', nullable: true }) createdBy: number | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  /** The session id can be exchanged until then. */
  @Column({ type: 'timestamptz', precision: 3 }) expiresAt: Date;

  @Column({ type: 'timestamptz', precision: 3, nullable: true }) exchangedAt: Date | null;

  /** Until then the token exchanged from this session is accepted. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true }) tokenExpiresAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true }) revokedAt: Date | null;
}
