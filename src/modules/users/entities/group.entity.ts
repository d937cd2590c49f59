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
import { Account } from './account.entity.js';

/**
 * An account-wide group. Embed users join them through provisioning and sessions (`groups`),
 * where they gate data-model access; names are matched exactly, as the data model sees them.
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

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;
}
