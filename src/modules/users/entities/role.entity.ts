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

/** A custom role of one account. Its policies are rows of `policies` with principal type `role`. */
@Entity('roles')
@Index('uq_roles_account_name_ci', { synchronize: false })
@Index('ix_roles_account_id', ['accountId', 'id'])
export class Role {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_roles_account' })
  account?: Relation<Account>;

  @Column({ type: 'varchar', length: 255 }) name: string;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
