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
import { Folder } from './folder.entity.js';

/**
 * A workbook: a set of reports and one dashboard. `dashboardDraft` is the working copy of the
 * dashboard; the published version lives in `dashboards`. `slug` is the deployment-scoped
 * identity used by dashboards-as-code (stored trimmed and lowercased).
 */
@Entity('workbooks')
@Index('ix_workbooks_folder', ['deploymentId', 'folderId', 'id'])
@Index('ix_workbooks_deployment', ['deploymentId', 'id'])
@Index('uq_workbooks_slug', ['deploymentId', 'slug'], { unique: true, where: 'slug IS NOT NULL' })
export class Workbook {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_workbooks_account' })
  account?: Relation<Account>;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_workbooks_deployment' })
  deployment?: Relation<Deployment>;

  /** Deleting a folder returns its content to the workspace root. */
  @Column({ type: 'integer', nullable: true }) folderId: number | null;

  @ManyToOne(() => Folder, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'folder_id', foreignKeyConstraintName: 'fk_workbooks_folder' })
  folder?: Relation<Folder>;

  @Column({ type: 'varchar', length: 255 }) name: string;

  @Column({ type: 'varchar', length: 255, nullable: true }) slug: string | null;

  @Column({ type: 'jsonb', default: () => "'{}'" }) meta: Record<string, unknown>;

  @Column({ type: 'jsonb', default: () => "'{}'" }) calculatedFields: Record<string, unknown>;

  @Column({ type: 'jsonb', nullable: true }) dashboardDraft: Record<string, unknown> | null;

  @Column({ type: 'integer' }) userId: number;

  @ManyToOne(() => User, { onDelete: 'NO ACTION' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_workbooks_user' })
  user?: Relation<User>;

  @Column({ type: 'integer' }) createdBy: number;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
