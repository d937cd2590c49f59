import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';
import type { OAuthIntegrationDto } from './dto/oauth-integration.dto.js';

const COLUMNS = `id, name, type, auth_url AS "authUrl", token_url AS "tokenUrl", client_id AS "clientId",
  redirect_uri AS "redirectUri", scopes, config, ${isoSql('created_at')} AS "createdAt",
  ${isoSql('updated_at')} AS "updatedAt"`;

/** An integration as written; the client secret already sealed (null on update: keep it). */
export interface OAuthIntegrationWrite {
  name: string;
  type: string;
  authUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string | null;
  redirectUri: string;
  /** Null on update: keep them. */
  scopes: string[] | null;
  /** JSON text; null clears it on create. */
  config: string | null;
}

/** What the authorization-code flow reads of an integration; the client secret still sealed. */
export interface OAuthIntegrationSecretRow {
  id: number;
  authUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  scopes: string[];
}

/** SQL over `oauth_integrations`. */
@Injectable()
export class OAuthIntegrationsRepository {
  constructor(private readonly db: Database) {}

  list(accountId: number): Promise<OAuthIntegrationDto[]> {
    return this.db.query<OAuthIntegrationDto>(
      `SELECT ${COLUMNS} FROM oauth_integrations WHERE account_id = :accountId ORDER BY id`,
      { accountId },
    );
  }

  get(accountId: number, id: number): Promise<OAuthIntegrationDto | undefined> {
    return this.db.one<OAuthIntegrationDto>(
      `SELECT ${COLUMNS} FROM oauth_integrations WHERE account_id = :accountId AND id = :id`,
      { accountId, id },
    );
  }

  /** Draws the id of a row to insert (so its secret can be sealed for it first). */
  async nextId(): Promise<number> {
    const row = await this.db.one<{ id: number }>(
      `SELECT nextval(pg_get_serial_sequence('oauth_integrations', 'id'))::int AS id`,
    );
    return row!.id;
  }

  async insert(accountId: number, id: number, v: OAuthIntegrationWrite): Promise<OAuthIntegrationDto> {
    const row = await this.db.one<OAuthIntegrationDto>(
      `INSERT INTO oauth_integrations
         (id, account_id, name, type, auth_url, token_url, client_id, client_secret, redirect_uri, scopes, config)
       VALUES (:id, :accountId, :name, :type, :authUrl, :tokenUrl, :clientId, :clientSecret, :redirectUri,
         :scopes::text[], :config::jsonb)
       RETURNING ${COLUMNS}`,
      { id, accountId, ...v },
    );
    return row!;
  }

  /**
   * Replaces the fields; a null secret or scopes keeps the stored ones, and `config` is replaced
   * only when `setConfig`. Undefined when the integration does not exist in the account.
   */
  update(
    accountId: number,
    id: number,
    v: OAuthIntegrationWrite,
    setConfig: boolean,
  ): Promise<OAuthIntegrationDto | undefined> {
    return this.db.one<OAuthIntegrationDto>(
      `UPDATE oauth_integrations SET
         name = :name, type = :type, auth_url = :authUrl, token_url = :tokenUrl, client_id = :clientId,
         redirect_uri = :redirectUri,
         client_secret = COALESCE(:clientSecret, client_secret),
         scopes = COALESCE(:scopes::text[], scopes),
         config = CASE WHEN :setConfig::boolean THEN :config::jsonb ELSE config END,
         updated_at = now()
       WHERE account_id = :accountId AND id = :id
       RETURNING ${COLUMNS}`,
      { accountId, id, ...v, setConfig },
    );
  }

  /** Its users' tokens and pending authorizations go with it (foreign keys cascade). */
  async delete(accountId: number, id: number): Promise<boolean> {
    const rows = await this.db.query(
      `DELETE FROM oauth_integrations WHERE account_id = :accountId AND id = :id RETURNING id`,
      { accountId, id },
    );
    return rows.length > 0;
  }

  /** The integration with its sealed client secret. */
  withSecret(accountId: number, id: number): Promise<OAuthIntegrationSecretRow | undefined> {
    return this.db.one<OAuthIntegrationSecretRow>(
      `SELECT id, auth_url AS "authUrl", token_url AS "tokenUrl", client_id AS "clientId",
         client_secret AS "clientSecret", redirect_uri AS "redirectUri", scopes
       FROM oauth_integrations WHERE account_id = :accountId AND id = :id`,
      { accountId, id },
    );
  }

  /** What the authorization URL needs (no secret). */
  authorizationTarget(
    accountId: number,
    id: number,
  ): Promise<{ authUrl: string; clientId: string; redirectUri: string; scopes: string[] } | undefined> {
    return this.db.one(
      `SELECT auth_url AS "authUrl", client_id AS "clientId", redirect_uri AS "redirectUri", scopes
       FROM oauth_integrations WHERE account_id = :accountId AND id = :id`,
      { accountId, id },
    );
  }
}
