import { Injectable } from '@nestjs/common';
import { Database } from '../../../core/database/database.js';

/** SQL over `github_installations`: which App installations each account has linked. */
@Injectable()
export class GitHubInstallationsRepository {
  constructor(private readonly db: Database) {}

  /** Records the link; false when the account had linked the installation already. */
  async link(accountId: number, installationId: number, userId: number): Promise<boolean> {
    const rows = await this.db.query<{ inserted: boolean }>(
      `INSERT INTO github_installations (account_id, installation_id, linked_by_user_id)
       VALUES (:accountId, :installationId, :userId)
       ON CONFLICT (account_id, installation_id) DO NOTHING
       RETURNING true AS inserted`,
      { accountId, installationId, userId },
    );
    return rows.length > 0;
  }

  async isLinked(accountId: number, installationId: number): Promise<boolean> {
    const row = await this.db.one<{ linked: boolean }>(
      `SELECT true AS linked FROM github_installations
       WHERE account_id = :accountId AND installation_id = :installationId`,
      { accountId, installationId },
      { prepare: true },
    );
    return row !== undefined;
  }

  async hasAny(accountId: number): Promise<boolean> {
    const row = await this.db.one<{ linked: boolean }>(
      `SELECT true AS linked FROM github_installations WHERE account_id = :accountId LIMIT 1`,
      { accountId },
      { prepare: true },
    );
    return row !== undefined;
  }

  /** The account's linked installation ids after `after` (all when null), ascending, at most `limit`. */
  async page(accountId: number, after: number | null, limit: number): Promise<number[]> {
    const rows = await this.db.query<{ installationId: string }>(
      `SELECT installation_id::text AS "installationId" FROM github_installations
       WHERE account_id = :accountId AND installation_id > :after
       ORDER BY installation_id
       LIMIT :limit`,
      { accountId, after: after ?? 0, limit },
      { prepare: true },
    );
    return rows.map((r) => Number(r.installationId));
  }

  /** Forgets the account's link (an installation GitHub no longer has). */
  async unlink(accountId: number, installationId: number): Promise<void> {
    await this.db.query(
      `DELETE FROM github_installations WHERE account_id = :accountId AND installation_id = :installationId`,
      { accountId, installationId },
    );
  }
}
