import { Body, Delete, Get, HttpCode, Param, Patch, Post, Put, Req, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentPrincipal } from '../../core/auth/access.decorators.js';
import type { Principal } from '../../core/auth/principal.js';
import { ScimPatchOpDto, ScimSearchRequestDto, ScimUserDto, ScimUserListDto } from './dto/scim.dto.js';
import {
  parseListQuery,
  parseRequestProjection,
  resourceId,
  parseSearchRequest,
  scimBase,
  sendResource,
  setWrittenHeaders,
  type ListResponse,
} from './scim-http.js';
import { ScimIdParam, ScimIfMatchHeader, ScimResourceController } from './scim-controller.decorator.js';
import { ScimErrors, ScimListQuery, ScimProjectionQuery } from './scim-openapi.js';
import { project } from './scim-projection.js';
import { ScimUsersService, type ScimResult } from './scim-users.service.js';
import { USER_SCHEMA } from './scim.schema.js';
import { ApiBodyExamples } from '../../core/openapi/api-body-examples.js';
import { CREATE_SCIM_USER_EXAMPLES } from './scim.examples.js';
import { Audited } from '../../core/audit/audited.decorator.js';

/** SCIM Users: the account's console users, for identity providers. Admin only. */
@ScimResourceController('Users')
export class ScimUsersController {
  constructor(private readonly users: ScimUsersService) {}

  @Get()
  @ApiOperation({
    summary: 'List or filter SCIM users',
    description: 'A ListResponse ordered by id. `userName eq "x"` is how identity providers look a user up.',
  })
  @ScimListQuery()
  @ApiOkResponse({ type: ScimUserListDto })
  @ScimErrors(400)
  listScimUsers(@CurrentPrincipal() actor: Principal, @Req() req: Request): Promise<ListResponse> {
    return this.users.list(actor, parseListQuery(req.query, USER_SCHEMA), scimBase(req));
  }

  @Post('.search')
  @Audited()
  @HttpCode(200)
  @ApiOperation({ summary: 'Search SCIM users', description: 'The list parameters in a SearchRequest body.' })
  @ApiBody({ type: ScimSearchRequestDto })
  @ApiOkResponse({ type: ScimUserListDto })
  @ScimErrors(400)
  searchScimUsers(
    @CurrentPrincipal() actor: Principal,
    @Body() body: unknown,
    @Req() req: Request,
  ): Promise<ListResponse> {
    return this.users.list(actor, parseSearchRequest(body, USER_SCHEMA), scimBase(req));
  }

  @Post()
  @Audited()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a SCIM user',
    description: 'A console user with the default roles of new users. 201 with a Location header.',
  })
  @ScimProjectionQuery()
  @ApiBodyExamples(ScimUserDto, CREATE_SCIM_USER_EXAMPLES)
  @ApiCreatedResponse({ type: ScimUserDto })
  @ScimErrors(400, 409)
  async createScimUser(
    @CurrentPrincipal() actor: Principal,
    @Body() body: unknown,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, unknown>> {
    return this.reply(req, res, await this.users.create(actor, body, scimBase(req)), true);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get a SCIM user',
    description: 'With its ETag; 304 when If-None-Match matches it.',
  })
  @ScimIdParam('user')
  @ScimProjectionQuery()
  @ApiOkResponse({ type: ScimUserDto })
  @ScimErrors(404)
  async getScimUser(
    @CurrentPrincipal() actor: Principal,
    @Param('id') id: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const projection = parseRequestProjection(req, USER_SCHEMA);
    const { resource, etag } = await this.users.get(actor, resourceId(id, 'User'), scimBase(req));
    sendResource(res, project(resource, projection), etag);
  }

  @Put(':id')
  @Audited()
  @ApiOperation({
    summary: 'Replace a SCIM user',
    description: 'Every writable attribute; omitted ones are cleared, except `active`, which is kept.',
  })
  @ScimIdParam('user')
  @ScimIfMatchHeader('user')
  @ScimProjectionQuery()
  @ApiBody({ type: ScimUserDto })
  @ApiOkResponse({ type: ScimUserDto })
  @ScimErrors(400, 404, 409, 412)
  async replaceScimUser(
    @CurrentPrincipal() actor: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, unknown>> {
    const result = await this.users.replace(
      actor,
      resourceId(id, 'User'),
      body,
      req.get('if-match'),
      scimBase(req),
    );
    return this.reply(req, res, result);
  }

  @Patch(':id')
  @Audited()
  @ApiOperation({
    summary: 'Patch a SCIM user',
    description: 'add, remove and replace operations, all applied or none; `active: false` deactivates.',
  })
  @ScimIdParam('user')
  @ScimIfMatchHeader('user')
  @ScimProjectionQuery()
  @ApiBody({ type: ScimPatchOpDto })
  @ApiOkResponse({ type: ScimUserDto })
  @ScimErrors(400, 404, 409, 412)
  async patchScimUser(
    @CurrentPrincipal() actor: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, unknown>> {
    const result = await this.users.patch(
      actor,
      resourceId(id, 'User'),
      body,
      req.get('if-match'),
      scimBase(req),
    );
    return this.reply(req, res, result);
  }

  @Delete(':id')
  @Audited()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a SCIM user',
    description: 'Not yourself, not the last admin; their workspace content passes to the caller.',
  })
  @ScimIdParam('user')
  @ScimIfMatchHeader('user')
  @ApiNoContentResponse({ description: 'Deleted' })
  @ScimErrors(400, 404, 412)
  deleteScimUser(
    @CurrentPrincipal() actor: Principal,
    @Param('id') id: string,
    @Req() req: Request,
  ): Promise<void> {
    return this.users.remove(actor, resourceId(id, 'User'), req.get('if-match'));
  }

  private reply(req: Request, res: Response, result: ScimResult, created = false): Record<string, unknown> {
    setWrittenHeaders(res, result, created);
    return project(result.resource, parseRequestProjection(req, USER_SCHEMA));
  }
}
