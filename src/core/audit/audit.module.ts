import { Global, Module, RequestMethod } from '@nestjs/common';
import { INTERCEPTORS_METADATA, METHOD_METADATA } from '@nestjs/common/constants.js';
import { DiscoveryModule, DiscoveryService, MetadataScanner } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditEvent } from './audit-event.entity.js';
import { AuditLogController } from './audit-log.controller.js';
import { AuditLogService } from './audit-log.service.js';
import { AuditInterceptor } from './audit.interceptor.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';

const MUTATING: ReadonlySet<RequestMethod> = new Set([
  RequestMethod.POST,
  RequestMethod.PUT,
  RequestMethod.PATCH,
  RequestMethod.DELETE,
  RequestMethod.ALL,
]);

/**
 * The audit log: one interceptor and the exception filter record; one endpoint reads. Whether an
 * account records is its tenant setting: the module owning those settings provides
 * `AuditLogSetting` (audit-log-setting.ts), a global provider.
 *
 * The interceptor sits on every handler of a mutating route, of every controller, and on no
 * read: a global interceptor would also run on each read only to let it pass. It is attached
 * here, when the module is created, which is before Nest builds the routes.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([AuditEvent]), DiscoveryModule],
  controllers: [AuditLogController],
  providers: [AuditRepository, AuditService, AuditLogService, AuditInterceptor],
  exports: [AuditService],
})
export class AuditModule {
  constructor(discovery: DiscoveryService, scanner: MetadataScanner, interceptor: AuditInterceptor) {
    for (const { metatype } of discovery.getControllers()) {
      if (typeof metatype !== 'function') continue;
      const prototype = metatype.prototype as Record<string, unknown>;
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name] as object;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined || !MUTATING.has(method)) continue;
        // The metadata outlives an application (tests start several in one process): replace
        // the interceptor of an earlier one.
        const others = (
          (Reflect.getMetadata(INTERCEPTORS_METADATA, handler) as unknown[] | undefined) ?? []
        ).filter((i) => !(i instanceof AuditInterceptor));
        // An instance, not the class: Nest uses an object with `intercept` as it is.
        Reflect.defineMetadata(INTERCEPTORS_METADATA, [interceptor, ...others], handler);
      }
    }
  }
}
