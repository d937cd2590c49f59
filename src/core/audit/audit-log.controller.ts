import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../auth/action.js';
import { CurrentPrincipal, RequireActions } from '../auth/access.decorators.js';
import type { Principal } from '../auth/principal.js';
import { ApiErrors } from '../openapi/api-errors.decorator.js';
import { AuditLogListDto, AuditLogQueryDto } from './audit-log.dto.js';
import { AuditLogService } from './audit-log.service.js';

@ApiTags('Audit Log')
@Controller('api/v1/audit-log')
export class AuditLogController {
  constructor(private readonly auditLog: AuditLogService) {}

  @Get()
  @RequireActions(Action.AuditLogManage)
  @ApiOperation({
    summary: 'List audit events',
    description:
      'Every mutating request of the account (POST, PUT, PATCH, DELETE), successful or refused, recorded while ' +
      '`auditLogEnabled` is on in the tenant settings; newest first. 403 `audit_log_disabled` while it is off.',
  })
  @ApiOkResponse({ type: AuditLogListDto })
  @ApiErrors('validation_failed', 'invalid_time_range', 'invalid_cursor', 'audit_log_disabled')
  getAuditLog(
    @CurrentPrincipal() actor: Principal,
    @Query() query: AuditLogQueryDto,
  ): Promise<AuditLogListDto> {
    return this.auditLog.list(actor, query);
  }
}
