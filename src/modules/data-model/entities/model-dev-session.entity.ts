import {
  Column,
  Entity,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  type Relation,
  UpdateDateColumn,
} from 'typeorm';
import { Deployment } from '../../deployments/entities/deployment.entity.js';
import { User } from '../../users/entities/user.entity.js';

/** The branch a user works on in dev mode, per deployment (absent: not in dev mode). */
@Entity('model_dev_sessions')
export class ModelDevSession {
  @PrimaryColumn({ type: 'integer' }) deploymentId: number;

  @PrimaryColumn({ type: 'integer' }) userId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_model_dev_sessions_deployment' })
  deployment?: Relation<Deployment>;

  @ManyToOne(() => User, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'fk_model_dev_sessions_user' })
  user?: Relation<User>;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'varchar', length: 255 }) branchName: string;

  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
