import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { UserAttributeValueDto, UserAttributeValueInputDto } from './dto/user-attribute-value.dto.js';
import { UserAttributeValuesService } from './user-attribute-values.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

@ApiTags('User Attribute Values')
@Controller('api/v1/user-attribute-values')
export class UserAttributeValuesController {
  constructor(private readonly values: UserAttributeValuesService) {}

  @Get(':userId')
  @Authenticated()
  @ApiOperation({
    summary: 'Get the attribute values of a user',
    description:
      'The effective values of the user, ordered by attribute name: one entry per attribute the user ' +
      'has a value for, plus one per attribute with a default value (then `value` is the default parsed ' +
      'to the type and `isDefault` is true). Admins may read any user of the account; other users only ' +
      'themselves (403 otherwise).',
  })
  @ApiOkResponse({ type: UserAttributeValueDto, isArray: true })
  @ApiErrors('validation_failed', 'forbidden', 'user_not_found')
  getUserAttributeValues(
    @CurrentPrincipal() actor: Principal,
    @IdParam('userId') userId: number,
  ): Promise<UserAttributeValueDto[]> {
    return this.values.list(actor, userId);
  }

  @Post()
  @Audited()
  @HttpCode(200)
  @RequireActions(Action.All)
  @ApiOperation({
    summary: 'Set a user’s attribute value',
    description:
      'Admin only. Creates or replaces the value of one attribute for one user; `value: null` removes ' +
      'it, and so does a body without `value` (the reference command-line tool’s `cube attributes values ' +
      'set` sends only `userId` and `userAttributeId`, as strings). The value must match the attribute’s ' +
      'type (JSON types: `"true"` is a string, not a boolean). The response shows the effective value, ' +
      'which after a removal is the default, if any.',
  })
  @ApiOkResponse({ type: UserAttributeValueDto })
  @ApiErrors('validation_failed', 'invalid_attribute_value', 'user_not_found', 'user_attribute_not_found')
  upsertUserAttributeValue(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: UserAttributeValueInputDto,
  ): Promise<UserAttributeValueDto> {
    return this.values.upsert(actor, dto);
  }
}
