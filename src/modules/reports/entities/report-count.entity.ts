import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, type Relation } from 'typeorm';
import { Deployment } from '../../deployments/entities/deployment.entity.js';

/**
 * The number of reports of a deployment, kept by triggers on `reports` in the transaction of
 * every insert, delete or move (migration ReportCounts1764300000000): the report list's exact
 * total without counting rows. Never written by the application. No row: no reports.
 */
@Entity('report_counts')
export class ReportCount {
  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'pk_report_counts' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_report_counts_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'integer' }) n: number;
}
