import { Catch, Injectable, type ArgumentsHost } from '@nestjs/common';
import type { Request } from 'express';
import { AuditService } from '../../core/audit/audit.service.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiError } from '../../core/errors/api-error.js';
import { AllExceptionsFilter } from '../../core/errors/exception.filter.js';
import { isNotFound, notFound } from '../../core/errors/not-found.js';
import { DeploymentsService } from './deployments.service.js';

/**
 * For routes nested under `/deployments/{deploymentId}`: a 404 about the nested resource (a
 * report, folder, workbook...) becomes `deployment_not_found` when the deployment itself is not in
 * the caller's account, so a missing deployment answers one code on every route. An exception
 * filter of the controller, so it runs on the error path only: a successful request pays
 * nothing. Every error is then rendered (and audited) as the global filter does it.
 */
@Catch()
@Injectable()
export class DeploymentScopeFilter extends AllExceptionsFilter {
  constructor(
    private readonly deployments: DeploymentsService,
    audit: AuditService,
  ) {
    super(audit);
  }

  override catch(exception: unknown, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<Request & { principal?: Principal }>();
    void this.scoped(req, exception)
      .catch((err: unknown) => err)
      .then((err) => super.catch(err, host));
  }

  private async scoped(req: Request & { principal?: Principal }, err: unknown): Promise<unknown> {
    const id = Number(req.params?.deploymentId);
    const principal = req.principal;
    if (
      err instanceof ApiError &&
      err.getStatus() === 404 &&
      !isNotFound(err, 'Deployment') &&
      principal &&
      Number.isInteger(id) &&
      id > 0 &&
      id <= 2_147_483_647 &&
      !(await this.deployments.existsInAccount(principal.accountId, id))
    ) {
      return notFound('Deployment', id);
    }
    return err;
  }
}
