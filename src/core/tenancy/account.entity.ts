import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A tenant. Every other row belongs to exactly one account. */
@Entity('accounts')
export class Account {
  @PrimaryGeneratedColumn() id: number;

  @Column({ type: 'varchar', length: 63, unique: true }) slug: string;

  @Column({ type: 'varchar', length: 255 }) name: string;

  /**
   * The key that signs this account's embed tokens, sealed with SECRETS_KEY. Made on the first
   * embed session; never returned.
   */
  @Column({ type: 'text', nullable: true, select: false }) embedSecret: string | null;

  @CreateDateColumn({ type: 'timestamptz' }) createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' }) updatedAt: Date;
}
