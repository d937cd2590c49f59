import { Injectable } from '@nestjs/common';
import { Database } from '../../core/database/database.js';
import { isoSql } from '../../core/database/sql.js';
import type { OidcTokenConfigDto } from './dto/oidc-token-config.dto.js';

const COLUMNS = `id, name, audience_type AS "audienceType", audience, sub_format AS "subFormat",
  target_env_var AS "targetEnvVar", custom_claims AS "customClaims", is_enabled AS "isEnabled",
  ${isoSql('created_at')} AS "createdAt", ${isoSql('updated_at')} AS "updatedAt"`;

/** The fields a config's rules resolve, as stored. */
export interface OidcTokenConfigWrite {
  name: string;
  audience: string;
  subFormat: string | null;
  targetEnvVar: string | null;
  customClaims: Record<string, unknown> | null;
  isEnabled: boolean;
}

/** SQL over `oidc_token_configs`. */
@Injectable()
export class OidcTokenConfigsRepository {
  constructor(private readonly db: Database) {}

  list(accountId: number): Promise<OidcTokenConfigDto[]> {
    return this.db.query<OidcTokenConfigDto>(
      `SELECT ${COLUMNS} FROM oidc_token_configs WHERE account_id = :accountId ORDER BY id`,
      { accountId },
    );
  }

  /** The config; row-locked until the unit of work ends with `lock`. */
  get(accountId: number, id: number, lock = false): Promise<OidcTokenConfigDto | undefined> {
    return this.db.one<OidcTokenConfigDto>(
      `SELECT ${COLUMNS} FROM oidc_token_configs WHERE account_id = :accountId AND id = :id${lock ? ' FOR UPDATE' : ''}`,
      { accountId, id },
    );
  }

  async insert(
    accountId: number,
    audienceType: string,
    v: OidcTokenConfigWrite,
  ): Promise<OidcTokenConfigDto> {
    const row = await this.db.one<OidcTokenConfigDto>(
      `INSERT INTO oidc_token_configs
         (account_id, name, audience_type, audience, sub_format, target_env_var, custom_claims, is_enabled)
       VALUES (:accountId, :name, :audienceType, :audience, :subFormat, :targetEnvVar, :customClaims::jsonb, :isEnabled)
       RETURNING ${COLUMNS}`,
      { accountId, audienceType, ...fields(v) },
    );
    return row!;
  }

  update(accountId: number, id: number, v: OidcTokenConfigWrite): Promise<OidcTokenConfigDto | undefined> {
    return this.db.one<OidcTokenConfigDto>(
      `UPDATE oidc_token_configs SET name = :name, audience = :audience, sub_format = :subFormat,
         target_env_var = :targetEnvVar, custom_claims = :customClaims::jsonb, is_enabled = :isEnabled,
         updated_at = now()
       WHERE account_id = :accountId AND id = :id
       RETURNING ${COLUMNS}`,
      { accountId, id, ...fields(v) },
    );
  }

  async delete(accountId: number, id: number): Promise<boolean> {
    const rows = await this.db.query(
      `DELETE FROM oidc_token_configs WHERE account_id = :accountId AND id = :id RETURNING id`,
      { accountId, id },
    );
    return rows.length > 0;
  }
}

/** The parameters of the stored fields (only those: the caller's object may carry more). */
const fields = (v: OidcTokenConfigWrite) => ({
  name: v.name,
  audience: v.audience,
  subFormat: v.subFormat,
  targetEnvVar: v.targetEnvVar,
  customClaims: v.customClaims === null ? null : JSON.stringify(v.customClaims),
  isEnabled: v.isEnabled,
});
