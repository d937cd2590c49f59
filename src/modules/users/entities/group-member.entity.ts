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
import { User } from './user.entity.js';

/** A console user's membership of an account-wide group. */
@Entity('group_members')
@Index('ix_group_members_user', ['userId'])
export class GroupMember {
  @PrimaryColumn({ type: 'integer' }) groupId: number;

  @PrimaryColumn({ type: 'integer' }) userId: number;

  @ManyToOne(() => Group, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'group_id', foreignKeyConstraintName: 'fk_group_members_group' })
  group?: Relation<Group>;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_group_members_user' })
  user?: Relation<User>;

  @Column({ type: 'integer' }) accountId: number;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;
}
