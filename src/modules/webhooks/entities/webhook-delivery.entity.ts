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
import { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { WebhookEvent } from './webhook-event.entity.js';

/**
 * One event to one endpoint (or a redelivery of it, `redelivery_of`). `pending` until an attempt is
 * answered with a 2xx (`succeeded`, recorded by compare-and-set on `attempts` before the job ends)
 * or the retries run out (`failed`). `next_attempt_at` is when a pending delivery is due,
 * `locked_until` the lease of the attempt sending it now. The event's type and resource are copied
 * so that a delivery waits for the older pending deliveries of the same endpoint and resource
 * through one index (`ix_webhook_deliveries_pending_resource`).
 */
@Entity('webhook_deliveries')
@Check('ck_webhook_deliveries_status', `status IN ('pending', 'succeeded', 'failed')`)
@Index('ix_webhook_deliveries_endpoint', ['endpointId', 'id'])
@Index('ix_webhook_deliveries_event', ['eventId'])
@Index('ix_webhook_deliveries_created', ['createdAt'])
@Index('ix_webhook_deliveries_due', ['nextAttemptAt'], { where: `status = 'pending'` })
@Index('ix_webhook_deliveries_pending_resource', ['endpointId', 'resourceType', 'resourceId', 'id'], {
  where: `status = 'pending'`,
})
export class WebhookDelivery {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'PK_webhook_deliveries' }) id: string;

  /** The endpoint's account (the job's fair share). */
  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) endpointId: number;

  @ManyToOne(() => WebhookEndpoint, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'endpoint_id', foreignKeyConstraintName: 'fk_webhook_deliveries_endpoint' })
  endpoint?: Relation<WebhookEndpoint>;

  @Column({ type: 'bigint' }) eventId: string;

  @ManyToOne(() => WebhookEvent, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'event_id', foreignKeyConstraintName: 'fk_webhook_deliveries_event' })
  event?: Relation<WebhookEvent>;

  @Column({ type: 'varchar', length: 64 }) eventType: string;

  @Column({ type: 'varchar', length: 64 }) resourceType: string;

  @Column({ type: 'text' }) resourceId: string;

  @Column({ type: 'varchar', length: 16, default: 'pending' }) status: string;

  @Column({ type: 'integer', default: 0 }) attempts: number;

  @Column({ type: 'smallint', nullable: true }) lastStatusCode: number | null;

  @Column({ type: 'integer', nullable: true }) lastDurationMs: number | null;

  @Column({ type: 'text', nullable: true }) lastError: string | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true }) nextAttemptAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true }) lockedUntil: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true }) firstAttemptAt: Date | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true }) deliveredAt: Date | null;

  @Column({ type: 'bigint', nullable: true }) redeliveryOf: string | null;

  @ManyToOne(() => WebhookDelivery, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'redelivery_of', foreignKeyConstraintName: 'fk_webhook_deliveries_redelivery_of' })
  original?: Relation<WebhookDelivery>;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
