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
import { NotificationRun } from './notification-run.entity.js';
import { Notification } from './notification.entity.js';

/**
 * One email of a run to one recipient (`recipient_key`: `user:<id>` or `embed:<id>`), unique per
 * run: the row that keeps a recipient from being mailed twice. Its status moves
 * `queued` → `sending` → `sent` | `failed`, or `unknown` when the attempt that was sending died
 * (the mail may have left; it is never sent again); `held` while its notification is paused, and
 * back to `queued` from `failed` when an admin resends it (`resends`). The recipient's ids and
 * address are copied, so the history outlives the recipient.
 */
@Entity('notification_deliveries')
@Index('ux_notification_deliveries_recipient', ['runId', 'recipientKey'], { unique: true })
@Index('ix_notification_deliveries_notification', ['notificationId', 'id'])
@Index('ix_notification_deliveries_open', ['notificationId', 'runId'], {
  where: `status IN ('queued', 'sending', 'held')`,
})
export class NotificationDelivery {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'PK_notification_deliveries' })
  id: string;

  @Column({ type: 'bigint' }) runId: string;

  @ManyToOne(() => NotificationRun, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'run_id', foreignKeyConstraintName: 'fk_notification_deliveries_run' })
  run?: Relation<NotificationRun>;

  @Column({ type: 'integer' }) notificationId: number;

  @ManyToOne(() => Notification, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'notification_id',
    foreignKeyConstraintName: 'fk_notification_deliveries_notification',
  })
  notification?: Relation<Notification>;

  @Column({ type: 'varchar', length: 64 }) recipientKey: string;

  @Column({ type: 'varchar', length: 16 }) recipientType: string;

  @Column({ type: 'integer', nullable: true }) userId: number | null;

  @Column({ type: 'integer', nullable: true }) embedUserId: number | null;

  @Column({ type: 'varchar', length: 320 }) email: string;

  /** The render (security context) this recipient is sent. */
  @Column({ type: 'varchar', length: 64 }) contextHash: string;

  @Column({ type: 'varchar', length: 16, default: 'queued' }) status: string;

  @Column({ type: 'integer', default: 0 }) attempts: number;

  @Column({ type: 'text', nullable: true }) lastError: string | null;

  @Column({ type: 'text', nullable: true }) smtpResponse: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true }) messageId: string | null;

  /** `not_produced` when the notification asks for an AI summary (none is ever made); else null. */
  @Column({ type: 'varchar', length: 16, nullable: true }) aiSummary: string | null;

  @Column({ type: 'timestamptz', precision: 3, nullable: true }) sentAt: Date | null;

  /**
   * Each resend of the delivery after it failed, oldest first: `{at, byUserId, email, error}`, the
   * address and error of the failure it resent.
   */
  @Column({ type: 'jsonb', default: () => "'[]'" }) resends: unknown[];

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
