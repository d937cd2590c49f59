/** The session behind a valid embed token, as its verification reads it. */
export interface ActiveEmbedSession {
  tenantId: number;
  tenantName: string;
  embedUserId: number;
  externalId: string;
  deploymentId: number;
  context: {
    publicDashboardId?: string | null;
    creatorMode?: boolean | null;
    securityContext?: Record<string, unknown> | null;
  };
}

/**
 * What signing and verifying embed tokens reads and writes. The rows (embed sessions, tenants
 * and users; the account's sealed key) belong to domain modules, which core never imports: the
 * embedding module provides this class (dependency inversion).
 */
export abstract class EmbedTokenStore {
  /**
   * The session `sessionId` of account `accountId` while it is exchanged, unrevoked and its token
   * unexpired, with its tenant and embed user; undefined otherwise. One query: every verification
   * runs it.
   */
  abstract activeSession(sessionId: number, accountId: number): Promise<ActiveEmbedSession | undefined>;

  /** The account's sealed signing key, or null while it has none. */
  abstract sealedKey(accountId: number): Promise<string | null>;

  /** Stores `sealed` as the account's signing key unless it has one (the first writer wins). */
  abstract storeKeyIfMissing(accountId: number, sealed: string): Promise<void>;
}
