import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated, CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import { Action } from '../../core/auth/action.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import { IdParam } from '../../core/http/id.pipe.js';
import {
  UserAttributeCreateDto,
  UserAttributeDto,
  UserAttributesListDto,
  UserAttributesQueryDto,
  UserAttributeUpdateDto,
} from './dto/user-attribute.dto.js';
import { UserAttributesService } from './user-attributes.service.js';
import { Audited } from '../../core/audit/audited.decorator.js';

@ApiTags('User Attributes')
@Controller('api/v1/user-attributes')
export class UserAttributesController {
  constructor(private readonly attributes: UserAttributesService) {}

  @Get()
  @Authenticated()
  @ApiOperation({
    summary: 'List user attributes',
    description:
      'Newest first, paged with `first`/`after`. `name` (exact) and `type` filter. The legacy ' +
      '`offset`/`limit` parameters and the `data`/`count`/`pagination` fields still work but are deprecated.',
  })
  @ApiOkResponse({ type: UserAttributesListDto })
  @ApiErrors('validation_failed')
  getUserAttributes(
    @CurrentPrincipal() actor: Principal,
    @Query() query: UserAttributesQueryDto,
  ): Promise<UserAttributesListDto> {
    return this.attributes.list(actor, query);
  }

  @Post()
  @Audited()
  @HttpCode(200)
  @RequireActions(Action.All)
  @ApiOperation({
    summary: 'Create a user attribute',
    description:
      'Admin only. The name is unique in the account and, like the type, cannot change later. ' +
      'A default value must parse as the type.',
  })
  @ApiOkResponse({ type: UserAttributeDto })
  @ApiErrors('validation_failed', 'invalid_default_value', 'user_attribute_name_taken')
  createUserAttribute(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: UserAttributeCreateDto,
  ): Promise<UserAttributeDto> {
    return this.attributes.create(actor, dto);
  }

  @Put(':id')
  @Audited()
  @RequireActions(Action.All)
  @ApiOperation({
    summary: 'Update a user attribute',
    description:
      'Admin only. Changes the display name, description and default value; omitted fields keep their ' +
      'value, null clears them. `type` may be sent but must be the current type (else 400 ' +
      '`attribute_type_immutable`); `name` cannot be sent.',
  })
  @ApiOkResponse({ type: UserAttributeDto })
  @ApiErrors(
    'validation_failed',
    'attribute_type_immutable',
    'invalid_default_value',
    'user_attribute_not_found',
  )
  updateUserAttribute(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @Body() dto: UserAttributeUpdateDto,
  ): Promise<UserAttributeDto> {
    return this.attributes.update(actor, id, dto);
  }

  @Delete(':id')
  @Audited()
  @HttpCode(204)
  @RequireActions(Action.All)
  @ApiOperation({
    summary: 'Delete a user attribute',
    description:
      "Admin only. Every user's value of it goes with it; its name is free again. An attribute of another " +
      'account, or an unknown id, is a 404 `user_attribute_not_found`.',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiErrors('validation_failed', 'user_attribute_not_found')
  async deleteUserAttribute(@CurrentPrincipal() actor: Principal, @IdParam('id') id: number): Promise<void> {
    await this.attributes.remove(actor, id);
  }
}
