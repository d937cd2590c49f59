import {
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
import { EmbedTenant } from './embed-tenant.entity.js';

/**
 * A user of an embed tenant, known by the id the account's own system gives it. `externalId`
 * is stored trimmed and lowercased, and is unique in the tenant, so casing never makes a second
 * user.
 */
@Entity('embed_users')
@Index('uq_embed_users_external_id', ['tenantId', 'externalId'], { unique: true })
/** Lists page by (email, id) in byte order, so the index is `email COLLATE "C"` (migration only). */
@Index('ix_embed_users_email', { synchronize: false })
@Index('ix_embed_users_account', ['accountId'])
export class EmbedUser {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_embed_users_account' })
  account?: Relation<Account>;

  @Column({ type: 'integer' }) tenantId: number;

  @ManyToOne(() => EmbedTenant, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id', foreignKeyConstraintName: 'fk_embed_users_tenant' })
  tenant?: Relation<EmbedTenant>;

  @Column({ type: 'varchar', length: 255 }) externalId: string;

  /** Lowercased; a placeholder under `embed-users.invalid` until one is supplied. */
  @Column({ type: 'varchar', length: 320 }) email: string;

  @Column({ type: 'varchar', length: 255, nullable: true }) displayName: string | null;

  @Column({ type: 'varchar', length: 2048, nullable: true }) picture: string | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;

  /** When a session of this user was last exchanged for a token. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true }) lastLoginAt: Date | null;
}
