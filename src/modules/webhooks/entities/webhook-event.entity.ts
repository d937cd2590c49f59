import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { Account } from '../../../core/tenancy/account.entity.js';

/**
 * One event an account's resources went through (`DomainEvents.publish`), recorded in the unit of
 * work of the change: its public id (`evt_...`, the `webhook-id` of every delivery), its type, the
 * resource it is about, and `payload`, the body every delivery POSTs. Kept as the account's event
 * log, with or without deliveries, and pruned after `WEBHOOK_RETENTION_DAYS`.
 */
@Entity('webhook_events')
@Index('ux_webhook_events_public_id', ['publicId'], { unique: true })
@Index('ix_webhook_events_occurred', ['occurredAt'])
export class WebhookEvent {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'PK_webhook_events' }) id: string;

  @Column({ type: 'varchar', length: 40 }) publicId: string;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_webhook_events_account' })
  account?: Relation<Account>;

  @Column({ type: 'varchar', length: 64 }) type: string;

  @Column({ type: 'varchar', length: 64 }) resourceType: string;

  /** The resource's id as text (ids are numbers or strings; the payload keeps the published form). */
  @Column({ type: 'text' }) resourceId: string;

  /** `{ id, type, timestamp, resource, data }`: what is POSTed. */
  @Column({ type: 'jsonb' }) payload: Record<string, unknown>;

  @Column({ type: 'timestamptz', precision: 3 }) occurredAt: Date;
}
