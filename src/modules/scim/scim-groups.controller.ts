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
import { ScimGroupDto, ScimGroupListDto, ScimPatchOpDto, ScimSearchRequestDto } from './dto/scim.dto.js';
import { ScimGroupsService } from './scim-groups.service.js';
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
import { project, type Projection } from './scim-projection.js';
import type { ScimResult } from './scim-users.service.js';
import { GROUP_SCHEMA } from './scim.schema.js';
import { Audited } from '../../core/audit/audited.decorator.js';

/** SCIM Groups: the account-wide groups of console users, for identity providers. Admin only. */
@ScimResourceController('Groups')
export class ScimGroupsController {
  constructor(private readonly groups: ScimGroupsService) {}

  @Get()
  @ApiOperation({
    summary: 'List or filter SCIM groups',
    description: 'A ListResponse ordered by id. With `excludedAttributes=members` members are not read.',
  })
  @ScimListQuery()
  @ApiOkResponse({ type: ScimGroupListDto })
  @ScimErrors(400)
  listScimGroups(@CurrentPrincipal() actor: Principal, @Req() req: Request): Promise<ListResponse> {
    return this.groups.list(actor, parseListQuery(req.query, GROUP_SCHEMA), scimBase(req));
  }

  @Post('.search')
  @Audited()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Search SCIM groups',
    description: 'The list parameters in a SearchRequest body.',
  })
  @ApiBody({ type: ScimSearchRequestDto })
  @ApiOkResponse({ type: ScimGroupListDto })
  @ScimErrors(400)
  searchScimGroups(
    @CurrentPrincipal() actor: Principal,
    @Body() body: unknown,
    @Req() req: Request,
  ): Promise<ListResponse> {
    return this.groups.list(actor, parseSearchRequest(body, GROUP_SCHEMA), scimBase(req));
  }

  @Post()
  @Audited()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a SCIM group',
    description: 'With its members. 201 with a Location header.',
  })
  @ScimProjectionQuery()
  @ApiBody({ type: ScimGroupDto })
  @ApiCreatedResponse({ type: ScimGroupDto })
  @ScimErrors(400, 409)
  async createScimGroup(
    @CurrentPrincipal() actor: Principal,
    @Body() body: unknown,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, unknown>> {
    const projection = this.projection(req);
    return this.reply(
      res,
      await this.groups.create(actor, body, scimBase(req), projection),
      projection,
      true,
    );
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get a SCIM group',
    description: 'With its ETag; 304 when If-None-Match matches it.',
  })
  @ScimIdParam('group')
  @ScimProjectionQuery()
  @ApiOkResponse({ type: ScimGroupDto })
  @ScimErrors(404)
  async getScimGroup(
    @CurrentPrincipal() actor: Principal,
    @Param('id') id: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const projection = this.projection(req);
    const { resource, etag } = await this.groups.get(
      actor,
      resourceId(id, 'Group'),
      scimBase(req),
      projection,
    );
    sendResource(res, project(resource, projection), etag);
  }

  @Put(':id')
  @Audited()
  @ApiOperation({
    summary: 'Replace a SCIM group',
    description: 'Name, externalId and the whole membership.',
  })
  @ScimIdParam('group')
  @ScimIfMatchHeader('group')
  @ScimProjectionQuery()
  @ApiBody({ type: ScimGroupDto })
  @ApiOkResponse({ type: ScimGroupDto })
  @ScimErrors(400, 404, 409, 412)
  async replaceScimGroup(
    @CurrentPrincipal() actor: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, unknown>> {
    const projection = this.projection(req);
    const result = await this.groups.replace(
      actor,
      resourceId(id, 'Group'),
      body,
      req.get('if-match'),
      scimBase(req),
      projection,
    );
    return this.reply(res, result, projection);
  }

  @Patch(':id')
  @Audited()
  @ApiOperation({
    summary: 'Patch a SCIM group',
    description: 'Rename it, or add and remove members (`members[value eq "42"]`), all applied or none.',
  })
  @ScimIdParam('group')
  @ScimIfMatchHeader('group')
  @ScimProjectionQuery()
  @ApiBody({ type: ScimPatchOpDto })
  @ApiOkResponse({ type: ScimGroupDto })
  @ScimErrors(400, 404, 409, 412)
  async patchScimGroup(
    @CurrentPrincipal() actor: Principal,
    @Param('id') id: string,
    @Body() body: unknown,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Record<string, unknown>> {
    const projection = this.projection(req);
    const result = await this.groups.patch(
      actor,
      resourceId(id, 'Group'),
      body,
      req.get('if-match'),
      scimBase(req),
      projection,
    );
    return this.reply(res, result, projection);
  }

  @Delete(':id')
  @Audited()
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a SCIM group', description: 'Its members stay; its roles and grants go.' })
  @ScimIdParam('group')
  @ScimIfMatchHeader('group')
  @ApiNoContentResponse({ description: 'Deleted' })
  @ScimErrors(404, 412)
  deleteScimGroup(
    @CurrentPrincipal() actor: Principal,
    @Param('id') id: string,
    @Req() req: Request,
  ): Promise<void> {
    return this.groups.remove(actor, resourceId(id, 'Group'), req.get('if-match'));
  }

  private projection(req: Request): Projection {
    return parseRequestProjection(req, GROUP_SCHEMA);
  }

  private reply(
    res: Response,
    result: ScimResult,
    projection: Projection,
    created = false,
  ): Record<string, unknown> {
    setWrittenHeaders(res, result, created);
    return project(result.resource, projection);
  }
}
