import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.js';

/**
 * The tenancy root: the `accounts` table (every other row belongs to exactly one account). Core
 * and every module reach account rows through this class; the users module adds an account's
 * first admin, the embedding module its signing key.
 */
@Injectable()
export class TenantAccounts {
  constructor(private readonly db: Database) {}

  /**
   * Locks the account row until the unit of work ends: serialises changes that could remove the
   * account's last admin. Taken before any user row, in every path, so they cannot deadlock.
   */
  async lock(accountId: number): Promise<void> {
    await this.db.query(`SELECT id FROM accounts WHERE id = :accountId FOR UPDATE`, { accountId });
  }

  /** The account's sealed embed signing key, or null while it has none. */
  async embedKey(accountId: number): Promise<string | null> {
    const row = await this.db.one<{ sealed: string | null }>(
      `SELECT embed_secret AS sealed FROM accounts WHERE id = :accountId`,
      { accountId },
    );
    return row?.sealed ?? null;
  }

  /** Stores the sealed key unless the account has one: the first writer wins. */
  async storeEmbedKeyIfMissing(accountId: number, sealed: string): Promise<void> {
    await this.db.query(
      `UPDATE accounts SET embed_secret = :sealed WHERE id = :accountId AND embed_secret IS NULL`,
      { accountId, sealed },
    );
  }

  /** The account's slug, or undefined when there is no such account. */
  async slug(accountId: number): Promise<string | undefined> {
    const row = await this.db.one<{ slug: string }>(`SELECT slug FROM accounts WHERE id = :accountId`, {
      accountId,
    });
    return row?.slug;
  }

  /** The id of the account of `slug`, or undefined. */
  async idOf(slug: string): Promise<number | undefined> {
    const row = await this.db.one<{ id: number }>(`SELECT id FROM accounts WHERE slug = :slug`, { slug });
    return row?.id;
  }

  /** The account of `slug`, created when missing (safe to run concurrently). */
  async upsert(slug: string): Promise<number> {
    const row = await this.db.one<{ id: number }>(
      `INSERT INTO accounts (slug, name) VALUES (:slug, :slug)
       ON CONFLICT (slug) DO UPDATE SET slug = EXCLUDED.slug RETURNING id`,
      { slug },
    );
    return row!.id;
  }

  /** Whether any account exists (an installation's first start has none). */
  async any(): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM accounts LIMIT 1`);
    return rows.length > 0;
  }
}
