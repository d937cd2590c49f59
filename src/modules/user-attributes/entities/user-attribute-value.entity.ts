import {
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  UpdateDateColumn,
  type Relation,
} from 'typeorm';
import { Account } from '../../../core/tenancy/account.entity.js';
import { User } from '../../users/entities/user.entity.js';
import { UserAttribute } from './user-attribute.entity.js';

/** One user's value of one attribute, as JSON of the attribute's type. No row: no value. */
@Entity('user_attribute_values')
@Index('ix_user_attribute_values_attribute', ['userAttributeId'])
export class UserAttributeValue {
  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'pk_user_attribute_values' }) userId: number;

  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'pk_user_attribute_values' })
  userAttributeId: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_user_attribute_values_account' })
  account?: Relation<Account>;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_user_attribute_values_user' })
  user?: Relation<User>;

  @ManyToOne(() => UserAttribute, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_attribute_id', foreignKeyConstraintName: 'fk_user_attribute_values_attribute' })
  attribute?: Relation<UserAttribute>;

  @Column({ type: 'jsonb' }) value: unknown;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
