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
import { Deployment } from '../../deployments/entities/deployment.entity.js';
import { Account } from '../../../core/tenancy/account.entity.js';
import { User } from '../../users/entities/user.entity.js';
import { Folder } from '../../workspace/entities/folder.entity.js';
import { Workbook } from '../../workspace/entities/workbook.entity.js';

/**
 * A report. Its placements in spreadsheets are rows of `report_placements`, never a column
 * here, so placing and unplacing never rewrite the report (its `version` and `updatedAt` move
 * only when its definition changes). `publicId` is null for reports made before stable ids;
 * the API then shows one derived from `id`.
 */
@Entity('reports')
@Index('ix_reports_deployment_id', ['deploymentId', 'id'])
@Index('ix_reports_deployment_created', ['deploymentId', 'createdAt', 'id'])
@Index('ix_reports_deployment_updated', ['deploymentId', 'updatedAt', 'id'])
@Index('ix_reports_deployment_name', ['deploymentId', 'name', 'id'])
@Index('ix_reports_folder', ['folderId', 'id'])
@Index('ix_reports_workbook', ['workbookId', 'id'])
@Index('uq_reports_public_id', ['accountId', 'publicId'], { unique: true, where: 'public_id IS NOT NULL' })
export class Report {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_reports_account' })
  account?: Relation<Account>;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_reports_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'varchar', length: 12, nullable: true }) publicId: string | null;

  @Column({ type: 'integer', nullable: true }) folderId: number | null;

  @ManyToOne(() => Folder, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'folder_id', foreignKeyConstraintName: 'fk_reports_folder' })
  folder?: Relation<Folder>;

  /** Reports of a workbook go with it. */
  @Column({ type: 'integer', nullable: true }) workbookId: number | null;

  @ManyToOne(() => Workbook, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workbook_id', foreignKeyConstraintName: 'fk_reports_workbook' })
  workbook?: Relation<Workbook>;

  @Column({ type: 'varchar', length: 255 }) name: string;

  @Column({ type: 'varchar', length: 255, nullable: true }) title: string | null;

  @Column({ type: 'text', nullable: true }) description: string | null;

  @Column({ type: 'text', nullable: true }) jsonQuery: string | null;

  @Column({ type: 'text', nullable: true }) sqlQuery: string | null;

  /** The Python the report runs over its rows (a published snapshot's copy is what runs). */
  @Column({ type: 'text', nullable: true }) pythonCode: string | null;

  @Column({ type: 'jsonb', nullable: true }) meta: Record<string, unknown> | null;

  @Column({ type: 'jsonb', nullable: true }) pivotItems: Record<string, unknown> | null;

  @Column({ type: 'varchar', length: 16, nullable: true }) source: string | null;

  @Column({ type: 'integer', default: 1 }) version: number;

  @Column({ type: 'integer' }) userId: number;

  @ManyToOne(() => User, { onDelete: 'NO ACTION' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_reports_user' })
  user?: Relation<User>;

  @Column({ type: 'integer' }) createdBy: number;

  @Column({ type: 'integer', nullable: true }) refreshedBy: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'refreshed_by', foreignKeyConstraintName: 'fk_reports_refreshed_by' })
  refreshedByUser?: Relation<User>;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
