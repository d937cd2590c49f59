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

/**
 * An embed tenant: one customer of the account's own product, named by the account. Created on
 * demand by provisioning, group creation and sessions. Deleting it removes its users, groups,
 * memberships, sessions and workbook shares (foreign keys cascade).
 */
@Entity('embed_tenants')
@Index('uq_embed_tenants_name', ['accountId', 'name'], { unique: true })
@Check('ck_embed_tenants_name', `name ~ '^[a-z][a-z0-9-]{0,34}[a-z0-9]$'`)
export class EmbedTenant {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_embed_tenants_account' })
  account?: Relation<Account>;

  @Column({ type: 'varchar', length: 36 }) name: string;

  @Column({ type: 'varchar', length: 255, nullable: true }) displayName: string | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;
}
