import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { WebhookDelivery } from './webhook-delivery.entity.js';

/**
 * One POST of a delivery: its number (the primary key with the delivery, so an attempt is recorded
 * once however many workers raced to record it), when it was made, the answer's status (null when
 * none came: a network error, a timeout, an address refused) and what went wrong.
 */
@Entity('webhook_delivery_attempts')
export class WebhookDeliveryAttempt {
  @PrimaryColumn({ type: 'bigint', primaryKeyConstraintName: 'PK_webhook_delivery_attempts' })
  deliveryId: string;

  @ManyToOne(() => WebhookDelivery, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'delivery_id', foreignKeyConstraintName: 'fk_webhook_delivery_attempts_delivery' })
  delivery?: Relation<WebhookDelivery>;

  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'PK_webhook_delivery_attempts' })
  attempt: number;

  @Column({ type: 'timestamptz', precision: 3 }) at: Date;

  @Column({ type: 'smallint', nullable: true }) statusCode: number | null;

  @Column({ type: 'integer' }) durationMs: number;

  @Column({ type: 'text', nullable: true }) error: string | null;
}
