import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';

/**
 * One action granted to one principal on one resource. A role's policies, a user's direct
 * grants and a group's grants are all rows here, so one query answers for all of them.
 * `resourceId` is `*` for policies on every resource of a type (and for `Global` ones).
 *
 * Owned by core/auth (all SQL on it is in `grants.repository.ts` and `grants.fragments.ts`).
 * Principals and resources are plain columns (no foreign key: deleting one calls
 * `AccessService.forget` / `forgetPrincipal`); the account is named by its entity name so core
 * imports nothing from the users module.
 */
@Entity('policies')
@Index(
  'uq_policies_grant',
  ['accountId', 'principalType', 'principalId', 'resourceType', 'resourceId', 'action'],
  { unique: true },
)
@Index('ix_policies_resource', ['accountId', 'resourceType', 'resourceId'])
@Index('ix_policies_principal', ['principalType', 'principalId'])
export class Policy {
  @PrimaryGeneratedColumn({ type: 'bigint' }) id: string;

  @Column({ type: 'integer' }) accountId: number;

  @ManyToOne('Account', { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_policies_account' })
  account?: unknown;

  @Column({ type: 'varchar', length: 16 }) principalType: 'role' | 'user' | 'group';

  @Column({ type: 'integer' }) principalId: number;

  @Column({ type: 'varchar', length: 32 }) resourceType: string;

  @Column({ type: 'varchar', length: 64 }) resourceId: string;

  @Column({ type: 'varchar', length: 64 }) action: string;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}
