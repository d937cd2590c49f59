import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { queryRows } from '../../core/database/sql.js';
import { ApiKeysService } from './api-keys.service.js';
import { usersError } from './users.errors.js';

export interface BootstrapResult {
  accountId: number;
  userId: number;
  token: string;
}

/**
 * Accounts (tenants) and their first admin. Used by the admin command line and by the first
 * start of the embedded default; not exposed over HTTP.
 */
@Injectable()
export class AccountsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly apiKeys: ApiKeysService,
  ) {}

  /** The slug of an account (the accounts of authenticated callers always exist). */
  async slug(accountId: number): Promise<string> {
    const [row] = await queryRows<{ slug: string }>(
      this.dataSource,
      `SELECT slug FROM accounts WHERE id = $1`,
      [accountId],
    );
    if (!row) throw usersError('account_not_found', `No account ${accountId}`);
    return row.slug;
  }

  /**
   * Creates the account and its admin when missing and issues a fresh token for that admin.
   * Safe to run concurrently and repeatedly: both inserts are `ON CONFLICT` upserts.
   */
  async bootstrap(slug: string, email: string, tokenName = 'bootstrap'): Promise<BootstrapResult> {
    return this.dataSource.transaction(async (manager) => {
      const [account]: Array<{ id: number }> = await manager.query(
        `INSERT INTO accounts (slug, name) VALUES ($1, $1)
         ON CONFLICT (slug) DO UPDATE SET slug = EXCLUDED.slug RETURNING id`,
        [slug],
      );
      const lower = email.toLowerCase();
      const [user]: Array<{ id: number }> = await manager.query(
        `INSERT INTO users (account_id, email, username, default_roles) VALUES ($1, $2, $2, '{Admin}')
         ON CONFLICT (account_id, email) DO UPDATE
           SET default_roles = CASE WHEN 'Admin' = ANY(users.default_roles) THEN users.default_roles
                                    ELSE array_prepend('Admin', users.default_roles) END,
               is_deactivated = false, updated_at = now()
         RETURNING id`,
        [account.id, lower],
      );
      const key = await this.apiKeys.issue(manager, account.id, user.id, tokenName);
      return { accountId: account.id, userId: user.id, token: key.token };
    });
  }

  /** Issues a token for an existing user of an existing account. */
  async token(slug: string, email: string): Promise<{ userId: number; token: string }> {
    return this.dataSource.transaction(async (manager) => {
      const rows: Array<{ accountId: number; userId: number }> = await manager.query(
        `SELECT a.id AS "accountId", u.id AS "userId" FROM accounts a
         LEFT JOIN users u ON u.account_id = a.id AND u.email = $2 WHERE a.slug = $1`,
        [slug, email.toLowerCase()],
      );
      if (!rows[0]) throw usersError('account_not_found', `No account ${slug}`);
      if (!rows[0].userId) throw usersError('user_not_found', `No user ${email} in account ${slug}`);
      const key = await this.apiKeys.issue(manager, rows[0].accountId, rows[0].userId, 'cli');
      return { userId: rows[0].userId, token: key.token };
    });
  }

  async isEmpty(): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(`SELECT 1 FROM accounts LIMIT 1`);
    return rows.length === 0;
  }
}
