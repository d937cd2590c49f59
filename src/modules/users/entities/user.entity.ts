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

/** A console user. Email is stored lowercased; email and username are unique per account. */
@Entity('users')
@Index('uq_users_account_email', ['accountId', 'email'], { unique: true })
@Index('uq_users_account_username_ci', { synchronize: false })
@Index('ix_users_account_id', ['accountId', 'id'])
export class User {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_users_account' })
  account?: Relation<Account>;

  @Column({ type: 'varchar', length: 320 }) email: string;

  @Column({ type: 'varchar', length: 255 }) username: string;

  @Column({ type: 'varchar', length: 255, nullable: true }) firstName: string | null;

  /** Family name (SCIM `name.familyName`). */
  @Column({ type: 'varchar', length: 255, nullable: true }) lastName: string | null;

  /** SCIM `displayName`, when the identity provider sends one. */
  @Column({ type: 'varchar', length: 255, nullable: true }) displayName: string | null;

  @Column({ type: 'varchar', length: 2048, nullable: true }) picture: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true }) title: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true }) externalId: string | null;

  @Column({ type: 'boolean', default: false }) isDeactivated: boolean;

  /** Names of built-in roles (see `BUILT_IN_ROLES`). */
  @Column({ type: 'text', array: true, default: () => "'{}'" }) defaultRoles: string[];

  @Column({ type: 'jsonb', default: () => "'{}'" }) settings: Record<string, unknown>;

  @Column({ type: 'jsonb', default: () => "'{}'" }) notifications: Record<string, unknown>;

  @Column({ type: 'timestamptz', nullable: true }) lastLogin: Date | null;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
