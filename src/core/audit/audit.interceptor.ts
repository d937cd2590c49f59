import {
  HttpStatus,
  Injectable,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants.js';
import { Reflector } from '@nestjs/core';
import { from, mergeMap, type Observable } from 'rxjs';
import { AuditService, MUTATIONS, type AuditedRequest } from './audit.service.js';

/**
 * Records every mutating request whose handler completes. Failures, including those refused by
 * the guard before any handler runs, are recorded by the exception filter.
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  constructor(
    private readonly audit: AuditService,
    private readonly reflector: Reflector,
  ) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (ctx.getType() !== 'http') return next.handle();
    const req = ctx.switchToHttp().getRequest<AuditedRequest>();
    if (!MUTATIONS.has(req.method)) return next.handle();
    const status =
      this.reflector.get<number | undefined>(HTTP_CODE_METADATA, ctx.getHandler()) ??
      (req.method === 'POST' ? HttpStatus.CREATED : HttpStatus.OK);
    return next
      .handle()
      .pipe(mergeMap((body: unknown) => from(this.audit.record(req, status, body).then(() => body))));
  }
}
