import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { SecretBoxService } from '../../core/crypto/secret-box.service.js';
import { Database } from '../../core/database/database.js';
import { uniqueViolation } from '../../core/database/sql.js';
import type {
  CreateOAuthIntegrationDto,
  OAuthIntegrationDto,
  UpdateOAuthIntegrationDto,
} from './dto/oauth-integration.dto.js';
import { integrationsError } from './oauth.errors.js';
import {
  OAuthIntegrationsRepository,
  type OAuthIntegrationSecretRow,
} from './oauth-integrations.repository.js';

/** The config object is free-form; this bounds what one row may hold. */
const MAX_CONFIG_BYTES = 16 * 1024;

/** What the authorization-code flow needs of an integration: its row with the secret already opened. */
export type IntegrationCredentials = OAuthIntegrationSecretRow;

/** The sealed client secret is bound to its account and row: copied elsewhere, it does not open. */
const secretContext = (accountId: number, id: number) => `oauth-integration:${accountId}:${id}:client-secret`;

/** OAuth client registrations of the account. The client secret is write-only. */
@Injectable()
export class OAuthIntegrationsService {
  constructor(
    private readonly db: Database,
    private readonly integrations: OAuthIntegrationsRepository,
    private readonly secrets: SecretBoxService,
  ) {}

  list(actor: Principal): Promise<OAuthIntegrationDto[]> {
    return this.integrations.list(actor.accountId);
  }

  async get(actor: Principal, id: number): Promise<OAuthIntegrationDto> {
    const row = await this.integrations.get(actor.accountId, id);
    if (!row) throw notFound(id);
    return row;
  }

  async create(actor: Principal, dto: CreateOAuthIntegrationDto): Promise<OAuthIntegrationDto> {
    const config = checkedConfig(dto.config);
    return this.write(async () => {
      // The id is drawn first so the secret can be sealed for its row in the same statement.
      const id = await this.integrations.nextId();
      return this.integrations.insert(actor.accountId, id, {
        name: dto.name.trim(),
        type: dto.type,
        authUrl: dto.authUrl,
        tokenUrl: dto.tokenUrl,
        clientId: dto.clientId,
        clientSecret: this.secrets.seal(dto.clientSecret, secretContext(actor.accountId, id)),
        redirectUri: dto.redirectUri,
        scopes: uniqueScopes(dto.scopes ?? []),
        config: config === undefined ? null : JSON.stringify(config),
      });
    });
  }

  /** The required fields replace the stored ones; omitted scopes, config and secret are kept. */
  async update(actor: Principal, id: number, dto: UpdateOAuthIntegrationDto): Promise<OAuthIntegrationDto> {
    const config = checkedConfig(dto.config);
    return this.write(async () => {
      const row = await this.integrations.update(
        actor.accountId,
        id,
        {
          name: dto.name.trim(),
          type: dto.type,
          authUrl: dto.authUrl,
          tokenUrl: dto.tokenUrl,
          clientId: dto.clientId,
          clientSecret:
            typeof dto.clientSecret === 'string'
              ? this.secrets.seal(dto.clientSecret, secretContext(actor.accountId, id))
              : null,
          redirectUri: dto.redirectUri,
          scopes: dto.scopes === undefined ? null : uniqueScopes(dto.scopes),
          config: config === undefined ? null : JSON.stringify(config),
        },
        config !== undefined,
      );
      if (!row) throw notFound(id);
      return row;
    });
  }

  /** Its users' tokens and pending authorizations go with it (foreign keys cascade). */
  async remove(actor: Principal, id: number): Promise<void> {
    if (!(await this.integrations.delete(actor.accountId, id))) throw notFound(id);
  }

  /** What the authorization URL needs (no secret), or null when it does not exist in the account. */
  async authorizationTarget(
    accountId: number,
    id: number,
  ): Promise<Pick<IntegrationCredentials, 'authUrl' | 'clientId' | 'redirectUri' | 'scopes'> | null> {
    return (await this.integrations.authorizationTarget(accountId, id)) ?? null;
  }

  /** The integration with its opened client secret, or null when it does not exist in the account. */
  async credentials(accountId: number, id: number): Promise<IntegrationCredentials | null> {
    const row = await this.integrations.withSecret(accountId, id);
    if (!row) return null;
    return {
      ...row,
      clientSecret: this.secrets.open(row.clientSecret, secretContext(accountId, id)).toString('utf8'),
    };
  }

  private async write<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction(work);
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
