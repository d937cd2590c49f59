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
import { EmbedTenant } from './embed-tenant.entity.js';

/**
 * A group of one embed tenant (the `tenantGroups` of provisioning), for sharing content inside
 * the tenant. The name is immutable and may not start with the reserved `system:` prefix.
 */
@Entity('embed_groups')
@Index('uq_embed_groups_name', ['tenantId', 'name'], { unique: true })
@Index('ix_embed_groups_created', ['tenantId', 'createdAt', 'id'])
@Check('ck_embed_groups_name', `lower(name) NOT LIKE 'system:%'`)
export class EmbedGroup {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_embed_groups_account' })
  account?: Relation<Account>;

  @Column({ type: 'integer' }) tenantId: number;

  @ManyToOne(() => EmbedTenant, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id', foreignKeyConstraintName: 'fk_embed_groups_tenant' })
  tenant?: Relation<EmbedTenant>;

  @Column({ type: 'varchar', length: 100 }) name: string;

  @Column({ type: 'varchar', length: 500, nullable: true }) description: string | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;
}
