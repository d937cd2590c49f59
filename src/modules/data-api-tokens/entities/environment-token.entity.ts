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
import { ModelEnvironment } from '../../data-model/entities/model-environment.entity.js';

/**
 * A data API token issued for one environment (`POST .../environments/{id}/tokens`), kept until it
 * expires so that the environment's tokens can be listed. The token is sealed
 * (`SecretBoxService`, bound to its environment); the security context it carries is stored as
 * given. Deleted with its environment.
 */
@Entity('environment_tokens')
@Index('ix_environment_tokens_environment', ['environmentId', 'id'])
export class EnvironmentToken {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) environmentId: number;

  @ManyToOne(() => ModelEnvironment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'environment_id', foreignKeyConstraintName: 'fk_environment_tokens_environment' })
  environment?: Relation<ModelEnvironment>;

  /** The JWT, sealed. */
  @Column({ type: 'text' }) tokenSealed: string;

  @Column({ type: 'jsonb' }) securityContext: Record<string, unknown>;

  /** The scopes the token carries; null: none asked for. */
  @Column({ type: 'text', array: true, nullable: true }) scopes: string[] | null;

  /** `api` or `meta-sync`. */
  @Column({ type: 'varchar', length: 16 }) purpose: string;

  /** The user who issued it (null once that user is deleted). */
  @Column({ type: 'integer', nullable: true }) createdBy: number | null;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @Column({ type: 'timestamptz' }) expiresAt: Date;
}
