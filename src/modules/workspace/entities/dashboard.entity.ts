import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  type Relation,
  UpdateDateColumn,
} from 'typeorm';
import { Workbook } from './workbook.entity.js';

/**
 * The published dashboard of a workbook (at most one). Publishing again replaces `config` and
 * bumps `versionNumber`. `publicId` addresses it from embedding.
 */
@Entity('dashboards')
@Index('uq_dashboards_workbook', ['workbookId'], { unique: true })
@Index('uq_dashboards_public_id', ['publicId'], { unique: true })
export class Dashboard {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) deploymentId: number;

  @Column({ type: 'integer' }) workbookId: number;

  @ManyToOne(() => Workbook, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'workbook_id', foreignKeyConstraintName: 'fk_dashboards_workbook' })
  workbook?: Relation<Workbook>;

  @Column({ type: 'varchar', length: 32 }) publicId: string;

  @Column({ type: 'varchar', length: 255, nullable: true }) title: string | null;

  @Column({ type: 'jsonb' }) config: Record<string, unknown>;

  @Column({ type: 'varchar', length: 16, default: 'published' }) status: string;

  @Column({ type: 'boolean', default: false }) allowEmbed: boolean;

  @Column({ type: 'integer', default: 1 }) versionNumber: number;

  @Column({ type: 'integer', nullable: true }) createdBy: number | null;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
