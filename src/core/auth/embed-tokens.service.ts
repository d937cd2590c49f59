import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { errors as joseErrors, jwtVerify, SignJWT, type JWTHeaderParameters } from 'jose';
import { SecretBoxService } from '../crypto/secret-box.service.js';
import type { EmbedPrincipal, EmbedTokenClaims } from './embed-principal.js';
import { EmbedTokenStore } from './embed-token-store.js';

export const EMBED_TOKEN_ISSUER = 'cubecloud';
export const EMBED_TOKEN_AUDIENCE = 'embed';
const KEY_ID_PREFIX = 'acc-';
/** A JWT is three base64url parts; anything else is not even looked at. */
const JWT_SHAPE = /^[A-Za-z0-9_-]{2,2048}\.[A-Za-z0-9_-]{2,16384}\.[A-Za-z0-9_-]{2,512}$/;
const MAX_CACHED_KEYS = 1000;

const secretContext = (accountId: number) => `accounts:${accountId}:embed_secret`;

/**
 * Signs and verifies embed tokens: HS256 JWTs signed with the account's embed key (32 random
 * bytes made on first use, stored sealed with SECRETS_KEY). A token is accepted only while the
 * session it came from is neither revoked nor deleted (deleting the tenant deletes it), so every
 * verification reads that session row (through {@link EmbedTokenStore}, which the embedding
 * module provides).
 */
@Injectable()
export class EmbedTokensService {
  private readonly keys = new Map<number, Uint8Array>();

  constructor(
    private readonly store: EmbedTokenStore,
    private readonly secrets: SecretBoxService,
  ) {}

  /**
   * The account's signing key, made (once, race-free) on first use. Fetch it before opening a
   * transaction that then calls {@link sign}: a key made inside one would join it, and a rollback
   * would take the stored key away while this cache kept it.
   */
  async signingKey(accountId: number): Promise<Uint8Array> {
    return (await this.accountKey(accountId, true))!;
  }

  sign(
    key: Uint8Array,
    claims: EmbedTokenClaims,
    embedUserId: number,
    issuedAt: Date,
    expiresAt: Date,
  ): Promise<string> {
    return new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: `${KEY_ID_PREFIX}${claims.acc}` })
      .setIssuer(EMBED_TOKEN_ISSUER)
      .setAudience(EMBED_TOKEN_AUDIENCE)
      .setSubject(String(embedUserId))
      .setIssuedAt(Math.floor(issuedAt.getTime() / 1000))
      .setJti(randomBytes(12).toString('hex'))
      .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
      .sign(key);
  }

  /** The embed user behind `token`, or null for anything not valid right now. */
  async verify(token: string): Promise<EmbedPrincipal | null> {
    if (!JWT_SHAPE.test(token)) return null;
    let claims: EmbedTokenClaims & { sub?: string };
    try {
      const { payload } = await jwtVerify(token, (header: JWTHeaderParameters) => this.keyFor(header), {
        issuer: EMBED_TOKEN_ISSUER,
        audience: EMBED_TOKEN_AUDIENCE,
        algorithms: ['HS256'],
        requiredClaims: ['exp', 'sub', 'sid', 'acc'],
      });
      claims = payload as unknown as EmbedTokenClaims & { sub?: string };
    } catch (err) {
      if (err instanceof joseErrors.JOSEError || err instanceof UnknownKeyError) return null;
      throw err;
    }
    if (!Number.isSafeInteger(claims.sid) || !Number.isSafeInteger(claims.acc)) return null;
    const row = await this.store.activeSession(claims.sid, claims.acc);
    if (!row || String(row.embedUserId) !== claims.sub) return null;
    return {
      accountId: claims.acc,
      embedUserId: row.embedUserId,
      externalId: row.externalId,
      tenantId: row.tenantId,
      tenantName: row.tenantName,
      deploymentId: row.deploymentId,
      sessionId: claims.sid,
      publicDashboardId: row.context.publicDashboardId ?? null,
      creatorMode: row.context.creatorMode === true,
      securityContext: row.context.securityContext ?? null,
    };
  }

  private async keyFor(header: JWTHeaderParameters): Promise<Uint8Array> {
    const kid = header.kid ?? '';
    const id = kid.startsWith(KEY_ID_PREFIX) ? Number(kid.slice(KEY_ID_PREFIX.length)) : NaN;
    const key = Number.isSafeInteger(id) && id > 0 ? await this.accountKey(id, false) : null;
    if (!key) throw new UnknownKeyError();
    return key;
  }

  /** The account's signing key; made (once, race-free) when `create` and there is none yet. */
  private async accountKey(accountId: number, create: boolean): Promise<Uint8Array | null> {
    const cached = this.keys.get(accountId);
    if (cached) return cached;
    let sealed = await this.store.sealedKey(accountId);
    if (sealed === null && create) {
      await this.store.storeKeyIfMissing(
        accountId,
        this.secrets.seal(randomBytes(32), secretContext(accountId)),
      );
      sealed = await this.store.sealedKey(accountId);
    }
    if (sealed === null) return null;
    const key = new Uint8Array(this.secrets.open(sealed, secretContext(accountId)));
    if (this.keys.size >= MAX_CACHED_KEYS) this.keys.delete(this.keys.keys().next().value!);
    this.keys.set(accountId, key);
    return key;
  }
}

class UnknownKeyError extends Error {}
