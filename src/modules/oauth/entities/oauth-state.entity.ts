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
import { Account } from '../../../core/tenancy/account.entity.js';
import { User } from '../../users/entities/user.entity.js';
import { OAuthIntegration } from './oauth-integration.entity.js';

/**
 * A pending authorization made by initiate and consumed, once, by the callback. Only the
 * SHA-256 of the `state` is stored; the PKCE code verifier is sealed. The redirect URI is the one
 * the authorization URL carried, which the token request must repeat.
 */
@Entity('oauth_states')
@Index('uq_oauth_states_hash', ['stateHash'], { unique: true })
@Index('ix_oauth_states_user', ['userId', 'expiresAt'])
@Index('ix_oauth_states_integration', ['integrationId'])
@Index('ix_oauth_states_account', ['accountId'])
export class OAuthState {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_oauth_states_account' })
  account?: Relation<Account>;

  @Column({ type: 'integer' }) userId: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_oauth_states_user' })
  user?: Relation<User>;

  @Column({ type: 'integer' }) integrationId: number;

  @ManyToOne(() => OAuthIntegration, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'integration_id', foreignKeyConstraintName: 'fk_oauth_states_integration' })
  integration?: Relation<OAuthIntegration>;

  @Column({ type: 'char', length: 64 }) stateHash: string;

  /** Sealed. */
  @Column({ type: 'text', select: false }) codeVerifier: string;

  @Column({ type: 'varchar', length: 2048 }) redirectUri: string;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @Column({ type: 'timestamptz', precision: 3 }) expiresAt: Date;
}
