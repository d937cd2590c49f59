import {
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
} from 'typeorm';
import { EmbedGroup } from './embed-group.entity.js';
import { EmbedUser } from './embed-user.entity.js';

/** An embed user's membership of a group of its tenant. */
@Entity('embed_group_members')
@Index('ix_embed_group_members_added', ['groupId', 'createdAt', 'embedUserId'])
@Index('ix_embed_group_members_user', ['embedUserId'])
export class EmbedGroupMember {
  @PrimaryColumn({ type: 'integer' }) groupId: number;

  @PrimaryColumn({ type: 'integer' }) embedUserId: number;

  @ManyToOne(() => EmbedGroup, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'group_id', foreignKeyConstraintName: 'fk_embed_group_members_group' })
  group?: Relation<EmbedGroup>;

  @ManyToOne(() => EmbedUser, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'embed_user_id', foreignKeyConstraintName: 'fk_embed_group_members_user' })
  user?: Relation<EmbedUser>;

  @CreateDateColumn({ type: 'timestamptz', precision: 3 }) createdAt: Date;
}
