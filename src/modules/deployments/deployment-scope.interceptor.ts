import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { catchError, defer, type Observable } from 'rxjs';
import { ApiError } from '../../core/http/api-error.js';
import { isNotFound, notFound } from '../../core/http/not-found.js';
import type { Principal } from '../../core/auth/principal.js';
import { DeploymentsService } from './deployments.service.js';

/**
 * For routes nested under `/deployments/{deploymentId}`: a 404 about the nested resource (a
 * report, folder, workbook...) becomes `deployment_not_found` when the deployment itself is not in
 * the caller's account, so a missing deployment answers one code on every route. Checked only
 * on that error path, so successful requests pay nothing.
 */
@Injectable()
export class DeploymentScopeInterceptor implements NestInterceptor {
  constructor(private readonly deployments: DeploymentsService) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = ctx.switchToHttp().getRequest<Request & { principal?: Principal }>();
    return next.handle().pipe(catchError((err: unknown) => defer(() => this.rethrow(req, err))));
  }

  private async rethrow(req: Request & { principal?: Principal }, err: unknown): Promise<never> {
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
      throw notFound('Deployment', id);
    }
    throw err;
  }
}
