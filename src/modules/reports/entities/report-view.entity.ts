import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { User } from '../../users/entities/user.entity.js';
import { Report } from './report.entity.js';

/** When each user last opened each report: the `lastViewedAt` sort of the report list. */
@Entity('report_views')
@Index('ix_report_views_user', ['userId', 'lastViewedAt'])
export class ReportView {
  @PrimaryColumn({ type: 'integer' }) reportId: number;

  @PrimaryColumn({ type: 'integer' }) userId: number;

  @ManyToOne(() => Report, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'report_id', foreignKeyConstraintName: 'fk_report_views_report' })
  report?: Relation<Report>;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_report_views_user' })
  user?: Relation<User>;

  @Column({ type: 'timestamptz' }) lastViewedAt: Date;
}
