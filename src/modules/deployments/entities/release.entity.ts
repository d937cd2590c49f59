import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One release of a channel in the catalogue the operator keeps (`cli.js add-release`). The head
 * of a channel is its highest version in semantic-version order: `major`, `minor` and `patch`
 * are the parts of `version`, kept as integers so the database orders them.
 */
@Entity('release_catalogue')
@Index('ix_release_catalogue_order', ['channel', 'major', 'minor', 'patch'])
export class Release {
  @PrimaryColumn({ type: 'varchar', length: 16 }) channel: string;

  /** `1.6.2`, without the `v` of the image tag. */
  @PrimaryColumn({ type: 'varchar', length: 32 }) version: string;

  @Column({ type: 'integer' }) major: number;

  @Column({ type: 'integer' }) minor: number;

  @Column({ type: 'integer' }) patch: number;

  @CreateDateColumn({ type: 'timestamptz' }) releasedAt: Date;
}
