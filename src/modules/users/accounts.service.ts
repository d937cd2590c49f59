import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { TenantAccounts } from '../../core/tenancy/tenant-accounts.js';
import { ApiKeysService } from './api-keys.service.js';
import { UsersRepository } from './users.repository.js';
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
    private readonly db: Database,
    private readonly accounts: TenantAccounts,
    private readonly users: UsersRepository,
    private readonly apiKeys: ApiKeysService,
  ) {}

  /** The account's sealed embed signing key (made and sealed by core/auth), or null while it has none. */
  embedKey(accountId: number): Promise<string | null> {
    return this.accounts.embedKey(accountId);
  }

  /** Stores the sealed embed signing key unless the account has one (the first writer wins). */
  storeEmbedKeyIfMissing(accountId: number, sealed: string): Promise<void> {
    return this.accounts.storeEmbedKeyIfMissing(accountId, sealed);
  }

  /** The slug of an account (the accounts of authenticated callers always exist). */
  async slug(accountId: number): Promise<string> {
    const slug = await this.accounts.slug(accountId);
    if (slug === undefined) throw usersError('account_not_found', `No account ${accountId}`);
    return slug;
  }

  /**
   * Creates the account and its admin when missing and issues a fresh token for that admin.
   * Safe to run concurrently and repeatedly: both inserts are `ON CONFLICT` upserts.
   */
  async bootstrap(slug: string, email: string, tokenName = 'bootstrap'): Promise<BootstrapResult> {
    return this.db.transaction(async () => {
      const accountId = await this.accounts.upsert(slug);
      const userId = await this.users.upsertAdmin(accountId, email.toLowerCase());
      const key = await this.apiKeys.issue(accountId, userId, tokenName);
      return { accountId, userId, token: key.token };
    });
  }

  /** Issues a token for an existing user of an existing account. */
  async token(slug: string, email: string): Promise<{ userId: number; token: string }> {
    return this.db.transaction(async () => {
      const accountId = await this.accounts.idOf(slug);
      if (accountId === undefined) throw usersError('account_not_found', `No account ${slug}`);
      const userId = await this.users.userIdByEmail(accountId, email.toLowerCase());
      if (userId === undefined) throw usersError('user_not_found', `No user ${email} in account ${slug}`);
      const key = await this.apiKeys.issue(accountId, userId, 'cli');
      return { userId, token: key.token };
    });
  }

  async isEmpty(): Promise<boolean> {
    return !(await this.accounts.any());
  }
}
