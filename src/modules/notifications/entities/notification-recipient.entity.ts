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
import { EmbedUser } from '../../embedding/entities/embed-user.entity.js';
import { User } from '../../users/entities/user.entity.js';
import { Notification } from './notification.entity.js';

/**
 * Who a notification is mailed to: a console user (`USER`, `user_id`) or an embed user
 * (`EMBED_USER`, `embed_user_id`, with the security context, user attributes and groups its
 * rendering runs under). One row per user and notification; gone with either.
 */
@Entity('notification_recipients')
@Index('ux_notification_recipients_user', ['notificationId', 'userId'], { unique: true })
@Index('ux_notification_recipients_embed_user', ['notificationId', 'embedUserId'], { unique: true })
@Index('ix_notification_recipients_user', ['userId'])
@Index('ix_notification_recipients_embed_user', ['embedUserId'])
export class NotificationRecipient {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'PK_notification_recipients' }) id: number;

  @Column({ type: 'integer' }) notificationId: number;

  @ManyToOne(() => Notification, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'notification_id',
    foreignKeyConstraintName: 'fk_notification_recipients_notification',
  })
  notification?: Relation<Notification>;

  /** `USER` or `EMBED_USER`. */
  @Column({ type: 'varchar', length: 16 }) type: string;

  @Column({ type: 'integer', nullable: true }) userId: number | null;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_notification_recipients_user' })
  user?: Relation<User>;

  @Column({ type: 'integer', nullable: true }) embedUserId: number | null;

  @ManyToOne(() => EmbedUser, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'embed_user_id', foreignKeyConstraintName: 'fk_notification_recipients_embed_user' })
  embedUser?: Relation<EmbedUser>;

  /** EMBED_USER: the embed user's tenant and external id, as they address it in the API. */
  @Column({ type: 'varchar', length: 36, nullable: true }) embedTenantName: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true }) externalId: string | null;

  /** EMBED_USER: the address it is mailed at (its email, or an email-shaped external id). */
  @Column({ type: 'varchar', length: 320, nullable: true }) email: string | null;

  @Column({ type: 'jsonb', nullable: true }) securityContext: Record<string, unknown> | null;

  @Column({ type: 'jsonb', nullable: true }) userAttributes: unknown[] | null;

  @Column({ type: 'jsonb', nullable: true }) groups: string[] | null;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;
}
