import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A region deployments can run in. A platform-wide catalogue, seeded by migration. */
@Entity('regions')
export class Region {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'varchar', length: 64, unique: true }) name: string;

  @Column({ type: 'varchar', length: 255, nullable: true }) title: string | null;

  @Column({ type: 'varchar', length: 16, nullable: true }) provider: string | null;

  @Column({ type: 'boolean', default: true }) isPublic: boolean;

  @Column({ type: 'boolean', default: false }) isDedicated: boolean;

  @Column({ type: 'boolean', default: false }) isHybrid: boolean;

  @Column({ type: 'boolean', default: false }) useAiEngineer: boolean;
}
