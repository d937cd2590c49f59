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
import { User } from '../../users/entities/user.entity.js';

/**
 * Where an account's events are POSTed: the URL, the event types it subscribes to (or `*`), and
 * its signing secret, sealed for the account and endpoint (`SecretBoxService`). During a rotation
 * the previous secret, sealed the same way, signs too until `previous_secret_expires_at`. An
 * endpoint whose deliveries keep failing is disabled (`enabled` false, with the reason and when).
 */
@Entity('webhook_endpoints')
@Index('ix_webhook_endpoints_account', ['accountId', 'id'])
export class WebhookEndpoint {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'PK_webhook_endpoints' }) id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_webhook_endpoints_account' })
  account?: Relation<Account>;

  @Column({ type: 'varchar', length: 2048 }) url: string;

  @Column({ type: 'varchar', length: 500, nullable: true }) description: string | null;

  /** Event type names (`folder.created`), or `*` for every type. */
  @Column({ type: 'text', array: true }) events: string[];

  @Column({ type: 'text' }) secretSealed: string;

  @Column({ type: 'text', nullable: true }) previousSecretSealed: string | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true }) previousSecretExpiresAt: Date | null;

  @Column({ type: 'boolean', default: true }) enabled: boolean;

  @Column({ type: 'varchar', length: 500, nullable: true }) disabledReason: string | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true }) disabledAt: Date | null;

  /** Deliveries failed for good since the last success (reset by a success or by enabling). */
  @Column({ type: 'integer', default: 0 }) consecutiveFailures: number;

  @Column({ type: 'integer', nullable: true }) createdBy: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by', foreignKeyConstraintName: 'fk_webhook_endpoints_created_by' })
  creator?: Relation<User>;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
