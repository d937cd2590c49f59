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
import { Account } from '../../../core/tenancy/account.entity.js';
import { User } from '../../users/entities/user.entity.js';
import { OAuthIntegration } from './oauth-integration.entity.js';

/**
 * One user's connection to one integration: the tokens of the last successful authorization
 * (sealed), or the error of the last failed one. `expired` is never stored: it is computed when
 * read.
 */
@Entity('user_oauth_tokens')
@Index('uq_user_oauth_tokens_user_integration', ['userId', 'integrationId'], { unique: true })
@Index('ix_user_oauth_tokens_integration', ['integrationId'])
@Index('ix_user_oauth_tokens_account', ['accountId'])
@Check('ck_user_oauth_tokens_status', `status IN ('active', 'error')`)
export class UserOAuthToken {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_user_oauth_tokens_account' })
  account?: Relation<Account>;

  @Column({ type: 'integer' }) userId: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_user_oauth_tokens_user' })
  user?: Relation<User>;

  @Column({ type: 'integer' }) integrationId: number;

  @ManyToOne(() => OAuthIntegration, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'integration_id', foreignKeyConstraintName: 'fk_user_oauth_tokens_integration' })
  integration?: Relation<OAuthIntegration>;

  /** Sealed. */
  @Column({ type: 'text', nullable: true, select: false }) accessToken: string | null;

  /** Sealed. */
  @Column({ type: 'text', nullable: true, select: false }) refreshToken: string | null;

  @Column({ type: 'varchar', length: 64, nullable: true }) tokenType: string | null;

  /** The scope the provider granted, as it sent it (space-separated). */
  @Column({ type: 'text', nullable: true }) scope: string | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true }) accessTokenExpiresAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true }) refreshTokenExpiresAt: Date | null;

  /** `active` or `error`. */
  @Column({ type: 'varchar', length: 16 }) status: string;

  /** `{ error, errorDescription }` of the last failed authorization, else null. */
  @Column({ type: 'jsonb', nullable: true }) lastError: Record<string, unknown> | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
