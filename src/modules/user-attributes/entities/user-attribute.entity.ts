import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
  type Relation,
} from 'typeorm';
import { Account } from '../../../core/tenancy/account.entity.js';

/**
 * A user attribute of an account: a typed key (`region`, `cost_centers`) that every user may
 * carry a value for. The name and the type never change once created.
 */
@Entity('user_attributes')
@Index('uq_user_attributes_name', ['accountId', 'name'], { unique: true })
@Index('ix_user_attributes_created', ['accountId', 'createdAt', 'id'])
@Check('ck_user_attributes_name', `name ~ '^[A-Za-z_][A-Za-z0-9_]{0,63}$'`)
@Check('ck_user_attributes_type', `type IN ('string', 'number', 'boolean', 'string_array', 'number_array')`)
export class UserAttribute {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'pk_user_attributes' }) id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_user_attributes_account' })
  account?: Relation<Account>;

  @Column({ type: 'varchar', length: 64 }) name: string;

  @Column({ type: 'varchar', length: 16 }) type: string;

  @Column({ type: 'varchar', length: 255, nullable: true }) displayName: string | null;

  @Column({ type: 'varchar', length: 1000, nullable: true }) description: string | null;

  /** The value users without one of their own have, written as a string that parses as the type. */
  @Column({ type: 'text', nullable: true }) defaultValue: string | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
