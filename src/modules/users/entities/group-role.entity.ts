import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
} from 'typeorm';
import { Group } from './group.entity.js';
import { Role } from './role.entity.js';

/** A custom role given to every member of a group. */
@Entity('group_roles')
@Index('ix_group_roles_role', ['roleId'])
export class GroupRole {
  @PrimaryColumn({ type: 'integer' }) groupId: number;

  @PrimaryColumn({ type: 'integer' }) roleId: number;

  @ManyToOne(() => Group, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'group_id', foreignKeyConstraintName: 'fk_group_roles_group' })
  group?: Relation<Group>;

  @ManyToOne(() => Role, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'role_id', foreignKeyConstraintName: 'fk_group_roles_role' })
  role?: Relation<Role>;

  @Column({ type: 'integer' }) accountId: number;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;
}
