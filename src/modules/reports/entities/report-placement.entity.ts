import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, type Relation } from 'typeorm';
import { User } from '../../users/entities/user.entity.js';
import { Report } from './report.entity.js';

/**
 * One spot where a report is placed: one anchor cell on one sheet of one external spreadsheet.
 * `placementId` (the API's `id`) and `sheetId` are null on placements recorded before those
 * fields existed; every rule works on such rows through `sheetName` and `anchorCell`, or through
 * `resultLocation` when those are null too. `rowId` orders placements by when they were placed.
 */
@Entity('report_placements')
@Index('ix_report_placements_report', ['reportId', 'rowId'])
@Index('uq_report_placements_id', ['reportId', 'placementId'], {
  unique: true,
  where: 'placement_id IS NOT NULL',
})
@Index('ix_report_placements_workbook', ['accountId', 'externalWorkbookId'])
export class ReportPlacement {
  @PrimaryGeneratedColumn({ type: 'bigint' }) rowId: string;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) reportId: number;

  @ManyToOne(() => Report, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'report_id', foreignKeyConstraintName: 'fk_report_placements_report' })
  report?: Relation<Report>;

  @Column({ type: 'varchar', length: 64, nullable: true }) placementId: string | null;

  @Column({ type: 'varchar', length: 1024 }) externalWorkbookId: string;

  @Column({ type: 'varchar', length: 1024 }) resultLocation: string;

  @Column({ type: 'varchar', length: 255, nullable: true }) sheetId: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true }) sheetName: string | null;

  @Column({ type: 'varchar', length: 32, nullable: true }) anchorCell: string | null;

  @Column({ type: 'varchar', length: 32, nullable: true }) endResultCell: string | null;

  @Column({ type: 'varchar', length: 16, nullable: true }) host: string | null;

  @Column({ type: 'varchar', length: 1024, nullable: true }) workbookName: string | null;

  @Column({ type: 'timestamptz', nullable: true }) placedAt: Date | null;

  @Column({ type: 'integer', nullable: true }) placedByUserId: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'placed_by_user_id', foreignKeyConstraintName: 'fk_report_placements_placed_by' })
  placedBy?: Relation<User>;

  @Column({ type: 'timestamptz', nullable: true }) refreshedAt: Date | null;

  @Column({ type: 'integer', nullable: true }) refreshedByUserId: number | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({
    name: 'refreshed_by_user_id',
    foreignKeyConstraintName: 'fk_report_placements_refreshed_by',
  })
  refreshedBy?: Relation<User>;
}
