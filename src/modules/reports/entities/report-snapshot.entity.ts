import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { Dashboard } from '../../workspace/entities/dashboard.entity.js';
import { Report } from './report.entity.js';

/**
 * A report of the workbook as a publish of its dashboard took it: what the published dashboard
 * shows (`reportSnapshots`) and, for Python reports, the code a python run executes (its id is
 * the run's `reportVersionId`). Each publish replaces the dashboard's snapshots. This module writes
 * and reads them (report-snapshots.repository.ts, reports.fragments.ts); the workspace reaches
 * them through the snapshot source reports register with it (`WorkspaceContent`).
 */
@Entity('report_snapshots')
@Index('ix_report_snapshots_dashboard', ['dashboardId', 'id'])
@Index('ix_report_snapshots_report', ['reportId'])
export class ReportSnapshot {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'pk_report_snapshots' }) id: number;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) dashboardId: number;

  @ManyToOne(() => Dashboard, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'dashboard_id', foreignKeyConstraintName: 'fk_report_snapshots_dashboard' })
  dashboard?: Relation<Dashboard>;

  @Column({ type: 'integer' }) reportId: number;

  @ManyToOne(() => Report, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'report_id', foreignKeyConstraintName: 'fk_report_snapshots_report' })
  report?: Relation<Report>;

  /** The report's `version` when it was taken. */
  @Column({ type: 'integer' }) versionNumber: number;

  @Column({ type: 'varchar', length: 255 }) name: string;

  @Column({ type: 'varchar', length: 255, nullable: true }) title: string | null;

  @Column({ type: 'text', nullable: true }) description: string | null;

  @Column({ type: 'text', nullable: true }) sqlQuery: string | null;

  @Column({ type: 'text', nullable: true }) jsonQuery: string | null;

  @Column({ type: 'text', nullable: true }) pythonCode: string | null;

  @Column({ type: 'jsonb', nullable: true }) meta: Record<string, unknown> | null;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}
