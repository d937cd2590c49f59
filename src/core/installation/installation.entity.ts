import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The installation this database is: one row, its id made by the migration that created the
 * table (`gen_random_uuid()`). State kept outside PostgreSQL (the repositories of `REPOS_DIR`)
 * carries this id, so a database never takes another installation's state for its own. A copy
 * of the database (a restored backup) is the same installation.
 */
@Entity('installation')
export class InstallationRecord {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_installation' }) id: string;

  @Column({ type: 'timestamptz', default: () => 'now()' }) createdAt: Date;
}
