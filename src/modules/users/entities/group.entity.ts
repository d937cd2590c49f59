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

/**
 * An account-wide group. Console users are members (managed here or by SCIM) and inherit the
 * group's roles and grants; embed users join through provisioning and sessions (`groups`), where
 * groups gate data-model access. Names are matched exactly, as the data model sees them.
 */
@Entity('groups')
@Index('uq_groups_account_name', ['accountId', 'name'], { unique: true })
export class Group {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_groups_account' })
  account?: Relation<Account>;

  @Column({ type: 'varchar', length: 100 }) name: string;

  @Column({ type: 'varchar', length: 500, nullable: true }) description: string | null;

  /** The identity provider's id for the group (SCIM `externalId`). */
  @Column({ type: 'varchar', length: 255, nullable: true }) externalId: string | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
