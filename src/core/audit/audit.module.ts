import { Global, Module } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, MetadataScanner } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditEvent } from './audit-event.entity.js';
import { AuditLogController } from './audit-log.controller.js';
import { AuditLogService } from './audit-log.service.js';
import { AuditInterceptor } from './audit.interceptor.js';
import { AuditRepository } from './audit.repository.js';
import { AuditService } from './audit.service.js';
import { isAudited, isMutating } from './audited.decorator.js';

/**
 * The audit log: one interceptor and the exception filter record; one endpoint reads. Whether an
 * account records is its tenant setting: the module owning those settings provides
 * `AuditLogSetting` (audit-log-setting.ts), a global provider.
 *
 * Each mutating handler declares `@Audited()` (audited.decorator.ts), which puts the interceptor
 * on it and on no read. At start-up this module reads every controller through Nest's discovery
 * and refuses to start when a mutating handler lacks it, so none goes unrecorded.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([AuditEvent]), DiscoveryModule],
  controllers: [AuditLogController],
  providers: [AuditRepository, AuditService, AuditLogService, AuditInterceptor],
  exports: [AuditService],
})
export class AuditModule {
  constructor(discovery: DiscoveryService, scanner: MetadataScanner) {
    const missing: string[] = [];
    for (const { metatype } of discovery.getControllers()) {
      if (typeof metatype !== 'function') continue;
      const prototype = metatype.prototype as Record<string, object>;
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name];
        if (isMutating(handler) && !isAudited(handler)) missing.push(`${metatype.name}.${name}`);
      }
    }
    if (missing.length > 0) {
      throw new Error(`Mutating routes must be @Audited(); these are not: ${missing.join(', ')}`);
    }
  }
}
