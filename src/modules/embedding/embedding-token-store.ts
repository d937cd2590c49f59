import { Injectable } from '@nestjs/common';
import { EmbedTokenStore, type ActiveEmbedSession } from '../../core/auth/embed-token-store.js';
import { AccountsService } from '../users/accounts.service.js';
import { EmbedSessionsRepository } from './embed-sessions.repository.js';

/**
 * What core/auth's embed token service reads and writes, provided by this module (core imports no
 * module): the session behind a token from this module's tables, the account's signing key from
 * the users module.
 */
@Injectable()
export class EmbeddingTokenStore extends EmbedTokenStore {
  constructor(
    private readonly sessions: EmbedSessionsRepository,
    private readonly accounts: AccountsService,
  ) {
    super();
  }

  activeSession(sessionId: number, accountId: number): Promise<ActiveEmbedSession | undefined> {
    return this.sessions.activeSession(sessionId, accountId);
  }

  sealedKey(accountId: number): Promise<string | null> {
    return this.accounts.embedKey(accountId);
  }

  storeKeyIfMissing(accountId: number, sealed: string): Promise<void> {
    return this.accounts.storeEmbedKeyIfMissing(accountId, sealed);
  }
}
