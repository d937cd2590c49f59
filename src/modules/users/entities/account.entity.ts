import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A tenant. Every other row belongs to exactly one account. */
@Entity('accounts')
export class Account {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'varchar', length: 63, unique: true }) slug: string;

  @Column({ type: 'varchar', length: 255 }) name: string;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
