import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  PrimaryGeneratedColumn,
  type Relation,
} from 'typeorm';
import { Deployment } from '../../deployments/entities/deployment.entity.js';

/** An open upload: files arrive one request each, then `finish` commits them together. */
@Entity('model_uploads')
@Index('ix_model_uploads_expires', ['expiresAt'])
@Index('ix_model_uploads_account', ['accountId'])
export class ModelUpload {
  @PrimaryGeneratedColumn('uuid') id: string;

  @Column({ type: 'integer' }) accountId: number;

  @Column({ type: 'integer' }) deploymentId: number;

  @ManyToOne(() => Deployment, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'deployment_id', foreignKeyConstraintName: 'fk_model_uploads_deployment' })
  deployment?: Relation<Deployment>;

  @Column({ type: 'integer' }) userId: number;

  @Column({ type: 'varchar', length: 255 }) branchName: string;

  /** Repository-relative prefix the uploaded paths are under (`''` or `analytics/`). */
  @Column({ type: 'varchar', length: 1024 }) prefix: string;

  /**
   * Until then the upload takes parts; `finish` sets it to its own time when some of the upload's
   * bytes stay out of the commit, so the row is kept (closed) until the sweep prunes them.
   */
  @Column({ type: 'timestamptz' }) expiresAt: Date;

  /**
   * Bytes the upload's parts stored in the repository (every part, a replaced one too): counted
   * against the account's `MODEL_UPLOAD_MAX_PENDING_BYTES` until `finish` commits them or the
   * upload sweep prunes what is left (bigint: read as a string).
   */
  @Column({ type: 'bigint', default: 0 }) bytes: string;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;
}

/** One file of an open upload: its blob is already in the repository, unreferenced until `finish`. */
@Entity('model_upload_files')
export class ModelUploadFile {
  @PrimaryColumn({ type: 'uuid' }) uploadId: string;

  @PrimaryColumn({ type: 'varchar', length: 1024 })
  path: string;

  @ManyToOne(() => ModelUpload, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'upload_id', foreignKeyConstraintName: 'fk_model_upload_files_upload' })
  upload?: Relation<ModelUpload>;

  /** SHA-1 of the content, as the client computes it. */
  @Column({ type: 'char', length: 40 }) sha1: string;

  @Column({ type: 'char', length: 40 }) blobOid: string;

  /** The content's size in bytes. */
  @Column({ type: 'integer', default: 0 }) size: number;
}
