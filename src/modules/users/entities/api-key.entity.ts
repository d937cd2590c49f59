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
import { User } from './user.entity.js';

/** A Platform API token. Only the SHA-256 of the secret is stored. */
@Entity('api_keys')
@Index('uq_api_keys_token_hash', ['tokenHash'], { unique: true })
@Index('ix_api_keys_user', ['userId', 'id'])
export class ApiKey {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) userId: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_api_keys_user' })
  user?: Relation<User>;

  @Column({ type: 'varchar', length: 255 }) name: string;

  /** Hex SHA-256 of the secret. */
  @Column({ type: 'char', length: 64 }) tokenHash: string;

  /** The first characters of the secret, to recognise a key in lists. */
  @Column({ type: 'varchar', length: 16 }) tokenPrefix: string;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true }) lastUsedAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true }) expiresAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true }) revokedAt: Date | null;
}
