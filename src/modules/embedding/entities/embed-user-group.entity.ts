import { Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Group } from '../../users/entities/group.entity.js';
import { EmbedUser } from './embed-user.entity.js';

/** An embed user's membership of an account-wide group (the `groups` of provisioning). */
@Entity('embed_user_groups')
@Index('ix_embed_user_groups_group', ['groupId'])
export class EmbedUserGroup {
  @PrimaryColumn({ type: 'integer' }) embedUserId: number;

  @PrimaryColumn({ type: 'integer' }) groupId: number;

  @ManyToOne(() => EmbedUser, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'embed_user_id', foreignKeyConstraintName: 'fk_embed_user_groups_user' })
  user?: Relation<EmbedUser>;

  @ManyToOne(() => Group, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'group_id', foreignKeyConstraintName: 'fk_embed_user_groups_group' })
  group?: Relation<Group>;
}
