import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { EmbedUser } from '../../embedding/entities/embed-user.entity.js';

/**
 * How many comment writes an embed user made in the current window (a fixed minute from its
 * first write), for the `EMBED_COMMENT_WRITES_PER_MINUTE` bound. One row per embed user, going
 * with the user.
 */
@Entity('embed_comment_write_windows')
export class EmbedCommentWriteWindow {
  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'pk_embed_comment_write_windows' })
  embedUserId: number;

  @ManyToOne(() => EmbedUser, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'embed_user_id', foreignKeyConstraintName: 'fk_embed_comment_write_windows_user' })
  user?: Relation<EmbedUser>;

  @Column({ type: 'timestamptz', precision: 3 }) windowStartedAt: Date;

  @Column({ type: 'integer' }) writes: number;
}
