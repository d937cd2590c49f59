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

/**
 * An OAuth 2.0 client registration of an account at an external provider. The client secret is
 * sealed with SECRETS_KEY (bound to the account and the row) and never returned.
 */
@Entity('oauth_integrations')
/** Names are unique per account ignoring case: `(account_id, lower(name))` (migration only). */
@Index('uq_oauth_integrations_name', { synchronize: false })
@Check('ck_oauth_integrations_type', `type ~ '^[a-z][a-z0-9_-]{0,63}$'`)
export class OAuthIntegration {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_oauth_integrations_account' })
  account?: Relation<Account>;

  @Column({ type: 'varchar', length: 255 }) name: string;

  @Column({ type: 'varchar', length: 64 }) type: string;

  @Column({ type: 'varchar', length: 2048 }) authUrl: string;

  @Column({ type: 'varchar', length: 2048 }) tokenUrl: string;

  @Column({ type: 'varchar', length: 1024 }) clientId: string;

  /** Sealed; see `OAuthIntegrationsService` for the context it is bound to. */
  @Column({ type: 'text', select: false }) clientSecret: string;

  @Column({ type: 'varchar', length: 2048 }) redirectUri: string;

  @Column({ type: 'text', array: true, default: () => "'{}'" }) scopes: string[];

  @Column({ type: 'jsonb', nullable: true }) config: Record<string, unknown> | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
