import { Injectable } from '@nestjs/common';
import type { Principal } from '../../core/auth/principal.js';
import { Database } from '../../core/database/database.js';
import { uniqueViolation } from '../../core/database/sql.js';
import type {
  AudienceType,
  CreateOidcTokenConfigDto,
  OidcTokenConfigDto,
  UpdateOidcTokenConfigDto,
} from './dto/oidc-token-config.dto.js';
import { integrationsError } from './oauth.errors.js';
import { OidcTokenConfigsRepository, type OidcTokenConfigWrite } from './oidc-token-configs.repository.js';

/** The audience of the types that have a well-known one. */
export const FIXED_AUDIENCES: Partial<Record<AudienceType, string>> = {
  aws: 'sts.amazonaws.com',
  azure: 'api://AzureADTokenExchange',
};

/** A Workload Identity Federation provider, by resource path (`//iam…`, or the `https:` form). */
const GCP_AUDIENCE =
  /^(?:https:)?\/\/iam\.googleapis\.com\/projects\/[^/\s]+\/locations\/[^/\s]+\/workloadIdentityPools\/[^/\s]+\/providers\/[^/\s]+$/;
const REGISTERED_CLAIMS: ReadonlySet<string> = new Set(['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'jti']);
const CLAIM_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,63}$/;
const MAX_CLAIMS = 20;
const MAX_CLAIM_VALUES = 20;
const MAX_CLAIM_VALUE_LENGTH = 512;

/**
 * Which audiences the account's workload-identity tokens are minted for. `audience` is derived
 * from `audienceType` and stored; the type never changes after creation.
 */
@Injectable()
export class OidcTokenConfigsService {
  constructor(
    private readonly db: Database,
    private readonly configs: OidcTokenConfigsRepository,
  ) {}

  list(actor: Principal): Promise<OidcTokenConfigDto[]> {
    return this.configs.list(actor.accountId);
  }

  /** The config, or 404; row-locked until the unit of work ends with `lock`. */
  async get(actor: Principal, id: number, lock = false): Promise<OidcTokenConfigDto> {
    const row = await this.configs.get(actor.accountId, id, lock);
    if (!row) throw notFound(id);
    return row;
  }

  async create(actor: Principal, dto: CreateOidcTokenConfigDto): Promise<OidcTokenConfigDto> {
    const type = dto.audienceType;
    const name = dto.name ?? (type === 'custom' ? null : type);
    if (name === null) throw integrationsError('name_required', 'name is required for a custom audience');
    const v = resolve(type, {
      name,
      customAudience: dto.customAudience ?? null,
      subFormat: dto.subFormat ?? null,
      targetEnvVar: dto.targetEnvVar ?? null,
      customClaims: dto.customClaims ?? null,
      isEnabled: dto.isEnabled ?? true,
    });
    return this.write(() => this.configs.insert(actor.accountId, type, v));
  }

  /** Omitted fields keep their value; null clears subFormat, targetEnvVar and customClaims. */
  async update(actor: Principal, id: number, dto: UpdateOidcTokenConfigDto): Promise<OidcTokenConfigDto> {
    return this.write(async () => {
      const current = await this.get(actor, id, true);
      const type = current.audienceType;
      const v = resolve(type, {
        name: dto.name ?? current.name,
        // Only an audience that was supplied is ever kept: the fixed ones are derived again.
        customAudience:
          dto.customAudience !== undefined
            ? dto.customAudience
            : FIXED_AUDIENCES[type]
              ? null
              : current.audience,
        subFormat: dto.subFormat !== undefined ? dto.subFormat : current.subFormat,
        targetEnvVar: dto.targetEnvVar !== undefined ? dto.targetEnvVar : current.targetEnvVar,
        customClaims: dto.customClaims !== undefined ? dto.customClaims : current.customClaims,
        isEnabled: dto.isEnabled ?? current.isEnabled,
      });
      return (await this.configs.update(actor.accountId, id, v))!;
    });
  }

  async remove(actor: Principal, id: number): Promise<void> {
    if (!(await this.configs.delete(actor.accountId, id))) throw notFound(id);
  }

  private async write<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await this.db.transaction(work);
    } catch (err) {
      const constraint = uniqueViolation(err);
      if (constraint === 'uq_oidc_token_configs_audience_type') {
        throw integrationsError(
          'oidc_audience_type_taken',
          'The account already has a token config of this audience type; only custom ones may repeat',
        );
      }
      if (constraint !== null) {
        throw integrationsError(
          'oidc_token_config_name_taken',
          'An OIDC token config with that name already exists',
        );
      }
      throw err;
    }
  }
}

/** Applies the rules of the audience type to the wanted values. */
function resolve(
  type: AudienceType,
  want: Omit<OidcTokenConfigWrite, 'audience'> & { customAudience: string | null },
): OidcTokenConfigWrite {
  const fixed = FIXED_AUDIENCES[type];
  if (fixed && want.customAudience !== null) {
    throw integrationsError(
      'custom_audience_not_allowed',
      `The audience of ${type} is fixed (${fixed}); do not send customAudience`,
    );
  }
  if (!fixed && want.customAudience === null) {
    throw integrationsError('custom_audience_required', `customAudience is required for ${type}`);
  }
  const audience = fixed ?? want.customAudience!.trim();
  if (type === 'gcp' && !GCP_AUDIENCE.test(audience)) {
    throw integrationsError(
      'invalid_custom_audience',
      'customAudience of gcp must be a Workload Identity Federation provider: ' +
        '//iam.googleapis.com/projects/<number>/locations/global/workloadIdentityPools/<pool>/providers/<provider>',
    );
  }
  if (audience === '' || /[\s\p{Cc}]/u.test(audience)) {
    throw integrationsError('invalid_custom_audience', 'customAudience must not be blank or contain spaces');
  }
  if (type !== 'custom' && want.targetEnvVar !== null) {
    throw integrationsError('target_env_var_not_allowed', 'targetEnvVar is only for custom audiences');
  }
  if (want.customClaims !== null) checkClaims(want.customClaims);
  return { ...want, audience };
}

function checkClaims(claims: Record<string, unknown>): void {
  const problems: string[] = [];
  const entries = Object.entries(claims);
  if (entries.length > MAX_CLAIMS) problems.push(`customClaims may hold at most ${MAX_CLAIMS} claims`);
  const okValue = (v: unknown) => typeof v === 'string' && v.length <= MAX_CLAIM_VALUE_LENGTH;
  for (const [name, value] of entries.slice(0, MAX_CLAIMS)) {
    if (!CLAIM_NAME.test(name)) {
      problems.push(
        `customClaims.${name.slice(0, 64)}: a claim name is a letter or _, then letters, digits, _ . : -`,
      );
    } else if (REGISTERED_CLAIMS.has(name)) {
      problems.push(`customClaims.${name}: registered claims cannot be set`);
    } else if (
      !okValue(value) &&
      !(Array.isArray(value) && value.length <= MAX_CLAIM_VALUES && value.every(okValue))
    ) {
      problems.push(
        `customClaims.${name} must be a string or an array of at most ${MAX_CLAIM_VALUES} strings ` +
          `(${MAX_CLAIM_VALUE_LENGTH} characters each)`,
      );
    }
  }
  if (problems.length > 0) throw integrationsError('invalid_custom_claims', problems);
}

const notFound = (id: number) =>
  integrationsError('oidc_token_config_not_found', `OIDC token config ${id} was not found`);
