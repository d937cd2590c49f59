import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Action } from '../../core/auth/action.js';
import { Authenticated, CurrentPrincipal, RequireActions } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ApiErrors } from '../../core/openapi/api-errors.decorator.js';
import {
  ApiSuccessResponse,
  SUCCESS,
  type SuccessResponseDto,
} from '../../core/http/success-response.dto.js';
import { IdParam } from '../../core/http/id.pipe.js';
import { PoliciesInputDto, PoliciesResponseDto } from './dto/policy.dto.js';
import {
  BulkUserActionDto,
  BulkUserActionResultDto,
  UserCreateDto,
  UserDto,
  UserSettingsDto,
  UsersListDto,
  UsersQueryDto,
  UserUpdateDto,
} from './dto/user.dto.js';
import { UsersService } from './users.service.js';
import { ApiBodyExamples } from '../../core/openapi/api-body-examples.js';
import { CREATE_USER_EXAMPLES, POLICIES_EXAMPLES, UPDATE_USER_EXAMPLES } from './users.examples.js';
import { Audited } from '../../core/audit/audited.decorator.js';

@ApiTags('Users')
@Controller('api/v1/users')
export class UsersController {
  constructor(private readonly users: UsersService) {}

  @Get()
  @Authenticated()
  @ApiOperation({
    summary: 'List console users',
    description: 'Search matches first name, username or email.',
  })
  @ApiOkResponse({ type: UsersListDto })
  @ApiErrors('validation_failed', 'invalid_cursor', 'pagination_conflict')
  getUsers(@CurrentPrincipal() actor: Principal, @Query() query: UsersQueryDto): Promise<UsersListDto> {
    return this.users.list(actor, query);
  }

  @Get('me')
  @Authenticated()
  @ApiOperation({ summary: 'The calling user, with their effective policies' })
  @ApiOkResponse({ type: UserDto })
  getCurrentUser(@CurrentPrincipal() actor: Principal): Promise<UserDto> {
    return this.users.me(actor);
  }

  @Patch('me/settings')
  @Audited()
  @Authenticated()
  @ApiOperation({
    summary: 'Update my settings',
    description:
      'Merges a partial patch into your own settings: omitted fields stay, `sheets` merges field by field and ' +
      '`null` clears it. `defaultDeploymentId` must name a deployment of the account.',
  })
  @ApiOkResponse({ type: UserDto })
  @ApiErrors('validation_failed', 'unknown_deployment')
  updateMySettings(@CurrentPrincipal() actor: Principal, @Body() dto: UserSettingsDto): Promise<UserDto> {
    return this.users.updateMySettings(actor, dto);
  }

  @Post('bulk')
  @Audited()
  @HttpCode(200)
  @RequireActions(Action.All)
  @ApiOperation({
    summary: 'Apply an action to many users',
    description:
      '`DEACTIVATE` (their tokens stop working at once), `ACTIVATE` or `DELETE` up to 100 users. Each user is ' +
      'processed on its own, in order, with the guards of the single-user endpoints; the answer lists who ' +
      'succeeded and, for the others, the status and message the single-user endpoint would have given ' +
      '(404 unknown user, 403 deactivating yourself or the last active admin, 400 deleting yourself). ' +
      'Repeating a state a user is already in succeeds.',
  })
  @ApiOkResponse({ type: BulkUserActionResultDto })
  @ApiErrors('validation_failed')
  bulkUserAction(
    @CurrentPrincipal() actor: Principal,
    @Body() dto: BulkUserActionDto,
  ): Promise<BulkUserActionResultDto> {
    return this.users.bulk(actor, dto);
  }

  @Post()
  @Audited()
  @HttpCode(200)
  @RequireActions(Action.All)
  @ApiOperation({ summary: 'Create a console user' })
  @ApiOkResponse({ type: UserDto })
  @ApiErrors('validation_failed', 'unknown_deployment', 'email_taken', 'username_taken')
  @ApiBodyExamples(UserCreateDto, CREATE_USER_EXAMPLES)
  createUser(@CurrentPrincipal() actor: Principal, @Body() dto: UserCreateDto): Promise<UserDto> {
    return this.users.create(actor, dto);
  }

  @Get(':id')
  @Authenticated()
  @ApiOperation({ summary: 'Get a console user' })
  @ApiOkResponse({ type: UserDto })
  @ApiErrors('validation_failed', 'user_not_found')
  getUser(@CurrentPrincipal() actor: Principal, @IdParam('id') id: number): Promise<UserDto> {
    return this.users.get(actor, id);
  }

  @Put(':id')
  @Audited()
  @RequireActions(Action.All)
  @ApiOperation({
    summary: 'Update a console user',
    description: 'Omitted fields are left alone; settings merge key by key.',
  })
  @ApiOkResponse({ type: UserDto })
  @ApiErrors(
    'validation_failed',
    'unknown_deployment',
    'cannot_deactivate_self',
    'last_admin',
    'user_not_found',
  )
  @ApiBodyExamples(UserUpdateDto, UPDATE_USER_EXAMPLES)
  updateUser(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @Body() dto: UserUpdateDto,
  ): Promise<UserDto> {
    return this.users.update(actor, id, dto);
  }

  @Delete(':id')
  @Audited()
  @RequireActions(Action.All)
  @ApiOperation({ summary: 'Delete a console user' })
  @ApiSuccessResponse('Deleted')
  @ApiErrors('validation_failed', 'cannot_act_on_self', 'last_admin', 'user_not_found')
  async deleteUser(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
  ): Promise<SuccessResponseDto> {
    await this.users.remove(actor, id);
    return SUCCESS;
  }

  @Get(':id/policies')
  @RequireActions(Action.All)
  @ApiOperation({ summary: "A user's direct object-level and global grants" })
  @ApiOkResponse({ type: PoliciesResponseDto })
  @ApiErrors('validation_failed', 'user_not_found')
  getUserPolicies(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
  ): Promise<PoliciesResponseDto> {
    return this.users.getPolicies(actor, id);
  }

  @Put(':id/policies')
  @Audited()
  @RequireActions(Action.All)
  @ApiOperation({ summary: "Replace a user's direct grants" })
  @ApiOkResponse({ type: PoliciesResponseDto })
  @ApiErrors('validation_failed', 'unknown_resource', 'unsupported_resource_type', 'user_not_found')
  @ApiBodyExamples(PoliciesInputDto, POLICIES_EXAMPLES)
  replaceUserPolicies(
    @CurrentPrincipal() actor: Principal,
    @IdParam('id') id: number,
    @Body() dto: PoliciesInputDto,
  ): Promise<PoliciesResponseDto> {
    return this.users.replacePolicies(actor, id, dto);
  }
}
