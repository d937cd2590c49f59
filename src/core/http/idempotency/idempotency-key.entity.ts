import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Account } from '../../tenancy/account.entity.js';

/**
 * One `Idempotency-Key` of an account (see `idempotency.interceptor.ts`): the request that first
 * used it (its fingerprint) and, once it is answered, the answer, replayed to every repeat until
 * `expires_at`. While the first request runs, the row is `in_progress` and its process keeps
 * `lease_until` ahead; a row whose lease ran out (its process died) may be taken over.
 */
@Entity('idempotency_keys')
@Index('ix_idempotency_keys_expires', ['expiresAt'])
@Check('ck_idempotency_keys_state', `state IN ('in_progress', 'completed')`)
export class IdempotencyKey {
  @PrimaryColumn({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_idempotency_keys_account' })
  account?: Relation<Account>;

  /** As the client sent it: 1 to 255 printable ASCII characters. */
  @PrimaryColumn({ type: 'varchar', length: 255 }) key: string;

  /** SHA-256 (hex) of the method, the path with its query, the caller and the canonical body. */
  @Column({ type: 'char', length: 64 }) fingerprint: string;

  /** `in_progress` while the first request runs, `completed` once its answer is kept. */
  @Column({ type: 'varchar', length: 16 }) state: string;

  /** Random per claim: only the request holding it completes, renews or releases the row. */
  @Column({ type: 'uuid' }) claim: string;

  @Column({ type: 'smallint', nullable: true }) responseStatus: number | null;

  /** The headers replayed with the answer (`content-type`, `location`, `etag`), lower-case names. */
  @Column({ type: 'jsonb', nullable: true }) responseHeaders: Record<string, string> | null;

  /** The answer's body as sent (UTF-8 text); null for an answer without one. */
  @Column({ type: 'text', nullable: true }) responseBody: string | null;

  @Column({ type: 'timestamptz', precision: 3, default: () => 'now()' }) createdAt: Date;

  /** 24 hours after the first request; the prune deletes the row after it, a claim replaces it. */
  @Column({ type: 'timestamptz', precision: 3 }) expiresAt: Date;

  /** While `in_progress`: until when the row is held by its request's process. */
  @Column({ type: 'timestamptz', precision: 3, nullable: true }) leaseUntil: Date | null;
}
