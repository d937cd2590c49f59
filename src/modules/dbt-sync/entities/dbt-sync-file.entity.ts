import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { DbtSync } from './dbt-sync.entity.js';

/**
 * A file a sync generated: its path (project-relative, `model/cubes/orders.yml`) and, for a sync
 * whose output is `files`, its content (a sync with output `branch` committed the content).
 */
@Entity('dbt_sync_files')
export class DbtSyncFile {
  @PrimaryColumn({ type: 'uuid' }) syncId: string;

  @ManyToOne(() => DbtSync, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'sync_id', foreignKeyConstraintName: 'fk_dbt_sync_files_sync' })
  sync?: Relation<DbtSync>;

  @PrimaryColumn({ type: 'varchar', length: 1024 }) path: string;

  @Column({ type: 'text', nullable: true }) content: string | null;
}
