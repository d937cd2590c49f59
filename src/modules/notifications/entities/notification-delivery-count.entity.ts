import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Account } from '../../../core/tenancy/account.entity.js';

/**
 * How many deliveries an account's notification runs asked to send in one hour (UTC, truncated):
 * the counter of NOTIFICATION_MAX_DELIVERIES_PER_HOUR. Each run adds the deliveries it records in
 * one `INSERT ... ON CONFLICT (account_id, hour) DO UPDATE`, in the unit of work that records
 * them, and learns from the total how many of them the hour still allows (row lock: exact across
 * processes). Rows older than a day are removed as the account's next run goes by.
 */
@Entity('notification_delivery_counts')
export class NotificationDeliveryCount {
  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'PK_notification_delivery_counts' })
  accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_notification_delivery_counts_account' })
  account?: Relation<Account>;

  @PrimaryColumn({
    type: 'timestamptz',
    precision: 3,
    primaryKeyConstraintName: 'PK_notification_delivery_counts',
  })
  hour: Date;

  /** Deliveries asked for in the hour, refused ones included (so it may pass the limit). */
  @Column({ type: 'integer' }) deliveries: number;
}
