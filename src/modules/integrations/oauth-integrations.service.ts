import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { Principal } from '../../core/auth/principal.js';
import { SecretBoxService } from '../../core/crypto/secret-box.service.js';
import { isoSql, queryRows, uniqueViolation } from '../../core/database/sql.js';
import type {
  CreateOAuthIntegrationDto,
  OAuthIntegrationDto,
  UpdateOAuthIntegrationDto,
} from './dto/oauth-integration.dto.js';
import { integrationsError } from './integrations.errors.js';

/** The config object is free-form; this bounds what one row may hold. */
const MAX_CONFIG_BYTES = 16 * 1024;

const COLUMNS = `id, name, type, auth_url AS "authUrl", token_url AS "tokenUrl", client_id AS "clientId",
  redirect_uri AS "redirectUri", scopes, config, ${isoSql('created_at')} AS "createdAt",
  ${isoSql('updated_at')} AS "updatedAt"`;

/** What the authorization-code flow needs of an integration; the secret already opened. */
export interface IntegrationCredentials {
  id: number;
  authUrl: string;
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  scopes: string[];
}

/** The sealed client secret is bound to its account and row: copied elsewhere, it does not open. */
const secretContext = (accountId: number, id: number) => `oauth-integration:${accountId}:${id}:client-secret`;

/** OAuth client registrations of the account. The client secret is write-only. */
@Injectable()
export class OAuthIntegrationsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly secrets: SecretBoxService,
  ) {}

  list(actor: Principal): Promise<OAuthIntegrationDto[]> {
    return queryRows<OAuthIntegrationDto>(
      this.dataSource,
      `SELECT ${COLUMNS} FROM oauth_integrations WHERE account_id = $1 ORDER BY id`,
      [actor.accountId],
    );
  }

  async get(actor: Principal, id: number): Promise<OAuthIntegrationDto> {
    const [row] = await queryRows<OAuthIntegrationDto>(
      this.dataSource,
      `SELECT ${COLUMNS} FROM oauth_integrations WHERE account_id = $1 AND id = $2`,
      [actor.accountId, id],
    );
    if (!row) throw notFound(id);
    return row;
  }

  async create(actor: Principal, dto: CreateOAuthIntegrationDto): Promise<OAuthIntegrationDto> {
    const config = checkedConfig(dto.config);
    return this.write(async (m) => {
      // The id is drawn first so the secret can be sealed for its row in the same statement.
      const [{ id }] = await queryRows<{ id: number }>(
        m,
        `SELECT nextval(pg_get_serial_sequence('oauth_integrations', 'id'))::int AS id`,
      );
      const [row] = await queryRows<OAuthIntegrationDto>(
        m,
        `INSERT INTO oauth_integrations
           (id, account_id, name, type, auth_url, token_url, client_id, client_secret, redirect_uri, scopes, config)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::text[], $11::jsonb)
         RETURNING ${COLUMNS}`,
        [
          id,
          actor.accountId,
          dto.name.trim(),
          dto.type,
          dto.authUrl,
          dto.tokenUrl,
          dto.clientId,
          this.secrets.seal(dto.clientSecret, secretContext(actor.accountId, id)),
          dto.redirectUri,
          uniqueScopes(dto.scopes ?? []),
          config === undefined ? null : JSON.stringify(config),
        ],
      );
      return row;
    });
  }

  /** The required fields replace the stored ones; omitted scopes, config and secret are kept. */
  async update(actor: Principal, id: number, dto: UpdateOAuthIntegrationDto): Promise<OAuthIntegrationDto> {
    const config = checkedConfig(dto.config);
    return this.write(async (m) => {
      const [row] = await queryRows<OAuthIntegrationDto>(
        m,
        `UPDATE oauth_integrations SET
           name = $3, type = $4, auth_url = $5, token_url = $6, client_id = $7, redirect_uri = $8,
           client_secret = COALESCE($9, client_secret),
           scopes = COALESCE($10::text[], scopes),
           config = CASE WHEN $11::boolean THEN $12::jsonb ELSE config END,
           updated_at = now()
         WHERE account_id = $1 AND id = $2
         RETURNING ${COLUMNS}`,
        [
          actor.accountId,
          id,
          dto.name.trim(),
          dto.type,
          dto.authUrl,
          dto.tokenUrl,
          dto.clientId,
          dto.redirectUri,
          typeof dto.clientSecret === 'string'
            ? this.secrets.seal(dto.clientSecret, secretContext(actor.accountId, id))
            : null,
          dto.scopes === undefined ? null : uniqueScopes(dto.scopes),
          config !== undefined,
          config === undefined ? null : JSON.stringify(config),
        ],
      );
      if (!row) throw notFound(id);
      return row;
    });
  }

  /** Its users' tokens and pending authorizations go with it (foreign keys cascade). */
  async remove(actor: Principal, id: number): Promise<void> {
    const rows = await queryRows<{ id: number }>(
      this.dataSource,
      `DELETE FROM oauth_integrations WHERE account_id = $1 AND id = $2 RETURNING id`,
      [actor.accountId, id],
    );
    if (rows.length === 0) throw notFound(id);
  }

  /** What the authorization URL needs (no secret), or null when it does not exist in the account. */
  async authorizationTarget(
    accountId: number,
    id: number,
  ): Promise<Pick<IntegrationCredentials, 'authUrl' | 'clientId' | 'redirectUri' | 'scopes'> | null> {
    const [row] = await queryRows<IntegrationCredentials>(
      this.dataSource,
      `SELECT auth_url AS "authUrl", client_id AS "clientId", redirect_uri AS "redirectUri", scopes
       FROM oauth_integrations WHERE account_id = $1 AND id = $2`,
      [accountId, id],
    );
    return row ?? null;
  }

  /** The integration with its opened client secret, or null when it does not exist in the account. */
  async credentials(accountId: number, id: number): Promise<IntegrationCredentials | null> {
    const [row] = await queryRows<IntegrationCredentials>(
      this.dataSource,
      `SELECT id, auth_url AS "authUrl", token_url AS "tokenUrl", client_id AS "clientId",
         client_secret AS "clientSecret", redirect_uri AS "redirectUri", scopes
       FROM oauth_integrations WHERE account_id = $1 AND id = $2`,
      [accountId, id],
    );
    if (!row) return null;
    return {
      ...row,
      clientSecret: this.secrets.open(row.clientSecret, secretContext(accountId, id)).toString('utf8'),
    };
  }

  private async write<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    try {
      return await this.dataSource.transaction(work);
    } catch (err) {
      if (uniqueViolation(err) !== null) {
        throw integrationsError(
          'oauth_integration_name_taken',
          'An OAuth integration with that name already exists in the account',
        );
      }
      throw err;
    }
  }
}

const notFound = (id: number) =>
  integrationsError('oauth_integration_not_found', `OAuth integration ${id} was not found`);

const uniqueScopes = (scopes: readonly string[]): string[] => [...new Set(scopes)];

function checkedConfig(config: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (config !== undefined && Buffer.byteLength(JSON.stringify(config), 'utf8') > MAX_CONFIG_BYTES) {
    throw integrationsError(
      'config_too_large',
      `config must be at most ${MAX_CONFIG_BYTES / 1024} KB as JSON`,
    );
  }
  return config;
}
