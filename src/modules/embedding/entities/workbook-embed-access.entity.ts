import {
  CreateDateColumn,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { Workbook } from '../../workspace/entities/workbook.entity.js';
import { EmbedTenant } from './embed-tenant.entity.js';

/**
 * A read share of a workbook's published dashboard with one embed tenant, or, when `tenantId`
 * is null, with every embed user of the account. Its id is the share's `groupId`.
 */
@Entity('workbook_embed_access')
@Index('uq_workbook_embed_access_tenant', ['workbookId', 'tenantId'], {
  unique: true,
  where: 'tenant_id IS NOT NULL',
})
@Index('uq_workbook_embed_access_all', ['workbookId'], { unique: true, where: 'tenant_id IS NULL' })
@Index('ix_workbook_embed_access_tenant', ['tenantId'])
export class WorkbookEmbedAccess {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) workbookId: number;

  @ManyToOne(() => Workbook, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workbook_id', foreignKeyConstraintName: 'fk_workbook_embed_access_workbook' })
  workbook?: Relation<Workbook>;

  @Column({ type: 'integer', nullable: true }) tenantId: number | null;

  @ManyToOne(() => EmbedTenant, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id', foreignKeyConstraintName: 'fk_workbook_embed_access_tenant' })
  tenant?: Relation<EmbedTenant>;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;
}
