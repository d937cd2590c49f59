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
import { Deployment } from '../../deployments/entities/deployment.entity.js';
import { Account } from '../../../core/tenancy/account.entity.js';
import { User } from '../../users/entities/user.entity.js';

/**
 * A folder of a deployment's workspace. `ancestorIds` holds the chain of parent folders from
 * the root down (the folder itself excluded), kept up to date on every move, so ancestors,
 * breadcrumbs, descendant checks and inherited grants need no recursive query.
 */
@Entity('folders')
@Index('ix_folders_parent', ['deploymentId', 'parentId', 'position', 'id'])
@Index('ix_folders_ancestors', { synchronize: false })
@Check('ck_folders_depth', 'cardinality(ancestor_ids) < 32')
export class Folder {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_folders_account' })
  account?: Relation<Account>;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_folders_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'integer', nullable: true }) parentId: number | null;

  /** A folder with sub-folders cannot be deleted; the service answers 400 before this fires. */
  @ManyToOne(() => Folder, { onDelete: 'NO ACTION' })
  @JoinColumn({ name: 'parent_id', foreignKeyConstraintName: 'fk_folders_parent' })
  parent?: Relation<Folder>;

  @Column({ type: 'integer', array: true, default: () => "'{}'" }) ancestorIds: number[];

  @Column({ type: 'varchar', length: 255 }) name: string;

  @Column({ type: 'integer', default: 0 }) position: number;

  /** The owner. Deleting a user hands their content to the admin who deletes them. */
  @Column({ type: 'integer' }) userId: number;

  @ManyToOne(() => User, { onDelete: 'NO ACTION' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_folders_user' })
  user?: Relation<User>;

  @Column({ type: 'integer' }) createdBy: number;

  @Column({ type: 'integer', nullable: true }) updatedBy: number | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
