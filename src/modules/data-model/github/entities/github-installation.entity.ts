import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
} from 'typeorm';
import { Account } from '../../../../core/tenancy/account.entity.js';
import { User } from '../../../users/entities/user.entity.js';

/**
 * An installation of the GitHub App that an account has linked: proved through the setup
 * redirect (`GET /api/v1/github/setup`), whose signed `state` names the account. Only linked
 * installations are listed, browsed and connected to by the account. One installation may be
 * linked to several accounts (a GitHub organization shared by two tenants), each by its own
 * proof; the row is the account's, and goes with it.
 */
@Entity('github_installations')
export class GitHubInstallationLink {
  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'pk_github_installations' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_github_installations_account' })
  account?: Relation<Account>;

  /** GitHub's installation id (64-bit at GitHub; read back as a string). */
  @PrimaryColumn({ type: 'bigint', primaryKeyConstraintName: 'pk_github_installations' })
  installationId: string;

  /** The user whose `state` linked it; null once that user is deleted. */
  @Column({ type: 'integer', nullable: true }) linkedByUserId: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'linked_by_user_id', foreignKeyConstraintName: 'fk_github_installations_user' })
  linkedBy?: Relation<User>;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;
}
