/** An embed user, authenticated by an embed token (`POST /api/v1/embed/session/token`). */
export interface EmbedPrincipal {
  accountId: number;
  embedUserId: number;
  externalId: string;
  tenantId: number;
  tenantName: string;
  /** The deployment the session was made for; the token reaches nothing outside it. */
  deploymentId: number;
  /** The session row the token came from (revoking it ends the token). */
  sessionId: number;
  /** When the session named one dashboard, the only one the token may open. */
  publicDashboardId: string | null;
  creatorMode: boolean;
  /** The session's `securityContext`: what queries of the user's data run as (row-level security). */
  securityContext: Record<string, unknown> | null;
}

/** The claims an embed token carries besides the registered ones (`sub` is the embed user id). */
export interface EmbedTokenClaims {
  /** Account id. */
  acc: number;
  /** Session row id. */
  sid: number;
  /** Embed tenant name. */
  tnt: string;
  /** External id of the embed user. */
  ext: string;
  /** Deployment id. */
  dep: number;
  /** Everything else the session carries (groups, security context, settings...). */
  ctx: Record<string, unknown>;
}
