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
import { Role } from './role.entity.js';
import { User } from './user.entity.js';

/** Assignment of a custom role to a user. */
@Entity('user_roles')
@Index('ix_user_roles_role', ['roleId'])
export class UserRole {
  @PrimaryColumn({ type: 'integer' }) userId: number;

  @PrimaryColumn({ type: 'integer' }) roleId: number;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_user_roles_user' })
  user?: Relation<User>;

  @ManyToOne(() => Role, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'role_id', foreignKeyConstraintName: 'fk_user_roles_role' })
  role?: Relation<Role>;

  @Column({ type: 'integer' }) accountId: number;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}
