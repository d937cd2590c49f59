import { Injectable, Logger } from '@nestjs/common';
import { Action } from '../../core/auth/action.js';
import { AccessService } from '../../core/auth/access.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { SecretBoxService } from '../../core/crypto/secret-box.service.js';
import { Database } from '../../core/database/database.js';
import {
  buildPage,
  encodeCursor,
  fetchLimit,
  resolvePaging,
  type PageQueryDto,
} from '../../core/http/pagination.js';
import { deploymentsError } from './deployments.errors.js';
import type { EnvVariableInputDto, EnvVariableItemDto, EnvVariablesListDto } from './dto/env-vars.dto.js';
import {
  ENCRYPTED_PLACEHOLDER,
  ENV_VAR_NAME,
  ENV_VARS_PER_DEPLOYMENT,
  envVarContext,
  isSecretName,
} from './env-vars.rules.js';
import { EnvVarsRepository, type EnvVarRow } from './env-vars.repository.js';
import { DeploymentEvents } from './deployment-events.js';
import { DeploymentLifecycle } from './deployment-lifecycle.js';

/**
 * A deployment's environment variables, sealed at rest for their account, deployment and name.
 * Values leave this service in clear only through {@link values} (for the modules that configure
 * the deployment's runtime) and, for names that are not secret, in the list routes. No value is
 * ever part of a log line, an error message or an audit row.
 */
@Injectable()
export class EnvVarsService {
  private readonly logger = new Logger(EnvVarsService.name);

  constructor(
    private readonly db: Database,
    private readonly repository: EnvVarsRepository,
    private readonly access: AccessService,
    private readonly secrets: SecretBoxService,
    private readonly lifecycle: DeploymentLifecycle,
    private readonly events: DeploymentEvents,
  ) {}

  /** `GET .../env-vars`: one page in name order; secret-named values masked. */
  async list(actor: Principal, deploymentId: number, query: PageQueryDto): Promise<EnvVariablesListDto> {
    await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.DeploymentRead);
    const paging = resolvePaging(query, ['string']);
    const after = paging.mode === 'cursor' && paging.after ? (paging.after[0] as string) : null;
    const rows = await this.repository.page(deploymentId, after, fetchLimit(paging));
    const page = buildPage(
      rows,
      paging,
      (r) => [r.name],
      (r) => this.readBack(actor.accountId, deploymentId, r),
    );
    return { ...page, data: page.items };
  }

  /**
   * `PUT .../env-vars`: upserts the variables sent (a null value removes one) in one unit of work
   * and answers every variable of the deployment. Refused as a whole, changing nothing, when a
   * name is sent twice, a value is the placeholder, a new name is not an identifier, or the
   * deployment would hold too many.
   */
  async set(
    actor: Principal,
    deploymentId: number,
    variables: readonly EnvVariableInputDto[],
  ): Promise<EnvVariablesListDto> {
    await this.access.requireAccess(actor, 'Deployment', deploymentId, Action.SecretsManage);
    assertNoDuplicates(variables);
    const placeholders = variables.filter(
      (v) => v.value !== null && v.value.trim() === ENCRYPTED_PLACEHOLDER,
    );
    if (placeholders.length > 0) {
      throw deploymentsError(
        'env_var_placeholder',
        `The value of ${names(placeholders)} is the ${ENCRYPTED_PLACEHOLDER} placeholder of a masked read; ` +
          'send the real value, or leave the variable out to keep the stored one',
      );
    }
    const rows = await this.db.transaction(async () => {
      await this.repository.lock(deploymentId);
      const unusual = variables.filter((v) => !ENV_VAR_NAME.test(v.name)).map((v) => v.name);
      if (unusual.length > 0) {
        const stored = new Set(await this.repository.existing(deploymentId, unusual));
        const invalid = unusual.filter((n) => !stored.has(n));
        if (invalid.length > 0) {
          throw deploymentsError(
            'invalid_env_var_name',
            `Environment variable name ${invalid.map((n) => JSON.stringify(n)).join(', ')} is not valid: ` +
              `new names must match ${ENV_VAR_NAME.source}`,
          );
        }
      }
      await this.repository.upsert(
        actor.accountId,
        deploymentId,
        variables
          .filter((v): v is EnvVariableInputDto & { value: string } => v.value !== null)
          .map((v) => ({
            name: v.name,
            valueSealed: this.secrets.seal(v.value, envVarContext(actor.accountId, deploymentId, v.name)),
          })),
      );
      await this.repository.remove(
        deploymentId,
        variables.filter((v) => v.value === null).map((v) => v.name),
      );
      const count = await this.repository.count(deploymentId);
      if (count > ENV_VARS_PER_DEPLOYMENT) {
        throw deploymentsError(
          'too_many_env_vars',
          `A deployment holds at most ${ENV_VARS_PER_DEPLOYMENT} environment variables; this request would make ${count}`,
        );
      }
      await this.lifecycle.changed(actor.accountId, deploymentId);
      // The deployment's settings: no variable's name or value is in the event.
      await this.events.changed(actor.accountId, deploymentId);
      return this.repository.page(deploymentId, null, ENV_VARS_PER_DEPLOYMENT);
    });
    const items = rows.map((r) => this.readBack(actor.accountId, deploymentId, r));
    return {
      items,
      data: items,
      pageInfo: {
        hasNextPage: false,
        hasPreviousPage: false,
        startCursor: rows.length ? encodeCursor([rows[0].name]) : null,
        endCursor: rows.length ? encodeCursor([rows[rows.length - 1].name]) : null,
      },
    };
  }

  /**
   * Every variable of the deployment in clear, secret names included: for modules that configure
   * the deployment's runtime (never for a response). Throws when a stored value does not open
   * (altered, copied from another row, or sealed with another key), naming the variable only.
   */
  async values(accountId: number, deploymentId: number): Promise<Map<string, string>> {
    const rows = await this.repository.page(deploymentId, null, ENV_VARS_PER_DEPLOYMENT);
    const out = new Map<string, string>();
    for (const row of rows) {
      try {
        out.set(row.name, this.open(accountId, deploymentId, row));
      } catch {
        throw new Error(`Environment variable ${row.name} of deployment ${deploymentId} does not open`);
      }
    }
    return out;
  }

  /** The value a read answers: masked for a secret name (not even opened), else in clear. */
  private readBack(accountId: number, deploymentId: number, row: EnvVarRow): EnvVariableItemDto {
    if (isSecretName(row.name)) return { name: row.name, value: ENCRYPTED_PLACEHOLDER };
    try {
      return { name: row.name, value: this.open(accountId, deploymentId, row) };
    } catch {
      // Altered, copied from another row or sealed with another key: never shown; a PUT replaces it.
      this.logger.warn(
        { deploymentId, name: row.name },
        'An environment variable does not open (altered, copied from another row, or sealed with another key)',
      );
      return { name: row.name, value: ENCRYPTED_PLACEHOLDER };
    }
  }

  private open(accountId: number, deploymentId: number, row: EnvVarRow): string {
    return this.secrets
      .open(row.valueSealed, envVarContext(accountId, deploymentId, row.name))
      .toString('utf8');
  }
}

function names(variables: readonly EnvVariableInputDto[]): string {
  return variables.map((v) => JSON.stringify(v.name)).join(', ');
}

function assertNoDuplicates(variables: readonly EnvVariableInputDto[]): void {
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const v of variables) {
    if (seen.has(v.name)) repeated.add(v.name);
    seen.add(v.name);
  }
  if (repeated.size > 0) {
    throw deploymentsError(
      'duplicate_env_var_name',
      `${[...repeated].map((n) => JSON.stringify(n)).join(', ')} ${repeated.size > 1 ? 'are' : 'is'} sent more than once; send each name once`,
    );
  }
}
