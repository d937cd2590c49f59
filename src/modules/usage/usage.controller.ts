import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { coreError } from '../../core/errors/api-error.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { UsageAnalyticsTokenDto } from './dto/usage-analytics-token.dto.js';
import { UsageService } from './usage.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

@ApiTags('Usage Analytics')
@Controller('api/v1/usage-analytics')
@RequireActions(Action.All)
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Post('token')
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Issue a usage-analytics token',
    description:
      'Admin only. Returns a JWT valid for one hour for the usage-analytics data API at `apiUrl`, ' +
      'scoped to the caller’s account so queries see only its usage and billing data. Issuing is ' +
      'cheap: ask for a new token when the old one nears `expiresAt`. 404 `usage_analytics_disabled` ' +
      'when usage analytics is not configured.',
  })
  @ApiBody({
    required: false,
    description: 'Nothing to send: no body, or an empty object',
    schema: { type: 'object', properties: {}, additionalProperties: false },
  })
  @ApiOkResponse({ type: UsageAnalyticsTokenDto })
  @ApiErrors('validation_failed', 'usage_analytics_disabled')
  createToken(@CurrentPrincipal() actor: Principal, @Body() body: unknown): Promise<UsageAnalyticsTokenDto> {
    const empty =
      body === undefined ||
      body === null ||
      (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);
    if (!empty) throw coreError('validation_failed', ['This request takes no body fields']);
    return this.usage.createToken(actor);
  }
}
