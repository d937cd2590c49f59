import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { Account } from '../tenancy/account.entity.js';

/**
 * One mutating request of an account, recorded by the audit interceptor and exception filter.
 * Actors and targets are kept as plain values: the record outlives the user or the resource.
 */
@Entity('audit_events')
@Index('ix_audit_events_time', ['accountId', 'occurredAt', 'id'])
@Index('ix_audit_events_actor', ['accountId', 'actorId', 'occurredAt'])
@Index('ix_audit_events_action', ['accountId', 'action', 'occurredAt'])
@Index('ix_audit_events_target', ['accountId', 'targetType', 'targetId', 'occurredAt'])
export class AuditEvent {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_audit_events_account' })
  account?: Relation<Account>;

  @Column({ type: 'timestamptz', precision: 3, default: () => 'now()' }) occurredAt: Date;

  /** `user` (a Platform API token) or `embed_user` (an embed token). */
  @Column({ type: 'varchar', length: 16 }) actorType: string;

  @Column({ type: 'integer' }) actorId: number;

  @Column({ type: 'varchar', length: 320, nullable: true }) actorEmail: string | null;

  /** The operation id of the route, e.g. `createUser`. */
  @Column({ type: 'varchar', length: 100 }) action: string;

  @Column({ type: 'varchar', length: 10 }) method: string;

  @Column({ type: 'varchar', length: 2048 }) path: string;

  @Column({ type: 'varchar', length: 64, nullable: true }) targetType: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true }) targetId: string | null;

  @Column({ type: 'varchar', length: 128 }) requestId: string;

  /** `success` or `failure`. */
  @Column({ type: 'varchar', length: 16 }) outcome: string;

  @Column({ type: 'smallint' }) statusCode: number;

  /** What the entry records beyond its request (a merge that overrode the merge gate); null for most. */
  @Column({ type: 'jsonb', nullable: true }) details: Record<string, unknown> | null;
}
