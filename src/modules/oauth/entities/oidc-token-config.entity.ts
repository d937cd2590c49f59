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
import { Account } from '../../../core/tenancy/account.entity.js';

/**
 * An audience the account's workload-identity tokens are minted for. `audience` is derived from
 * `audienceType` (fixed for `aws` and `azure`, supplied for `gcp` and `custom`) and stored. At
 * most one config per well-known audience type; any number of `custom` ones.
 */
@Entity('oidc_token_configs')
@Index('uq_oidc_token_configs_name', ['accountId', 'name'], { unique: true })
@Index('uq_oidc_token_configs_audience_type', ['accountId', 'audienceType'], {
  unique: true,
  where: `audience_type <> 'custom'`,
})
@Check('ck_oidc_token_configs_audience_type', `audience_type IN ('aws', 'gcp', 'azure', 'custom')`)
export class OidcTokenConfig {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_oidc_token_configs_account' })
  account?: Relation<Account>;

  @Column({ type: 'varchar', length: 64 }) name: string;

  @Column({ type: 'varchar', length: 16 }) audienceType: string;

  @Column({ type: 'varchar', length: 1024 }) audience: string;

  @Column({ type: 'varchar', length: 200, nullable: true }) subFormat: string | null;

  @Column({ type: 'varchar', length: 128, nullable: true }) targetEnvVar: string | null;

  @Column({ type: 'jsonb', nullable: true }) customClaims: Record<string, unknown> | null;

  @Column({ type: 'boolean', default: true }) isEnabled: boolean;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz', precision: 3 }) updatedAt: Date;
}
