import {
  Column,
  CreateDateColumn,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
} from 'typeorm';
import { NotificationRun } from './notification-run.entity.js';

/**
 * The email of a run for one security context (`context_hash`: SHA-256 of its canonical JSON):
 * subject, HTML and text bodies, and the dashboard attachment (PDF or PNG). Rendered once and
 * kept, so a retried run and every delivery of that context send the same bytes.
 */
@Entity('notification_renders')
export class NotificationRender {
  @PrimaryColumn({ type: 'bigint', primaryKeyConstraintName: 'PK_notification_renders' }) runId: string;

  @PrimaryColumn({ type: 'varchar', length: 64, primaryKeyConstraintName: 'PK_notification_renders' })
  contextHash: string;

  @ManyToOne(() => NotificationRun, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'run_id', foreignKeyConstraintName: 'fk_notification_renders_run' })
  run?: Relation<NotificationRun>;

  @Column({ type: 'text' }) subject: string;

  @Column({ type: 'text' }) html: string;

  @Column({ type: 'text' }) text: string;

  @Column({ type: 'varchar', length: 255 }) filename: string;

  @Column({ type: 'varchar', length: 64 }) contentType: string;

  @Column({ type: 'bytea' }) content: Buffer;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;
}
