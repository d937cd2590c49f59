import { Controller, Get, Param, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam } from '@nestjs/swagger';
import type { Request } from 'express';
import { RequireActions } from '../../core/auth/access.decorators.js';
import { Action } from '../../core/auth/action.js';
import {
  ScimResourceTypeDto,
  ScimResourceTypeListDto,
  ScimSchemaDto,
  ScimSchemaListDto,
  ScimServiceProviderConfigDto,
} from './dto/scim.dto.js';
import { resourceTypes, schemas, serviceProviderConfig } from './scim-discovery.js';
import { listResponse, scimBase, type ListResponse } from './scim-http.js';
import { ScimController, ScimDiscoveryQuery, ScimErrors } from './scim-openapi.js';
import { scimError } from './scim.errors.js';

/**
 * Discovery (RFC 7644 section 4): what this service provider supports. Admin only, like every
 * SCIM route (every request of this product is authenticated). Query parameters are ignored,
 * as the RFC says, except `filter`: 403.
 */
@ScimController()
@Controller('api/scim/v2')
@RequireActions(Action.All)
@ScimDiscoveryQuery()
export class ScimDiscoveryController {
  @Get('ServiceProviderConfig')
  @ApiOperation({
    summary: 'SCIM service provider configuration',
    description: 'PATCH, filters and ETags are supported; bulk, sorting and password changes are not.',
  })
  @ApiOkResponse({ type: ScimServiceProviderConfigDto })
  @ScimErrors()
  getScimServiceProviderConfig(@Req() req: Request): Record<string, unknown> {
    return serviceProviderConfig(scimBase(req));
  }

  @Get('ResourceTypes')
  @ApiOperation({ summary: 'SCIM resource types', description: 'User and Group, in a ListResponse.' })
  @ApiOkResponse({ type: ScimResourceTypeListDto })
  @ScimErrors()
  listScimResourceTypes(@Req() req: Request): ListResponse {
    const all = resourceTypes(scimBase(req));
    return listResponse(all.length, 1, all);
  }

  @Get('ResourceTypes/:id')
  @ApiOperation({ summary: 'A SCIM resource type', description: '`User` or `Group`.' })
  @ApiParam({ name: 'id', example: 'User' })
  @ApiOkResponse({ type: ScimResourceTypeDto })
  @ScimErrors(404)
  getScimResourceType(@Param('id') id: string, @Req() req: Request): Record<string, unknown> {
    const found = resourceTypes(scimBase(req)).find((t) => t.id === id);
    if (!found) throw scimError('scim_not_found', `Resource type ${id} was not found`);
    return found;
  }

  @Get('Schemas')
  @ApiOperation({
    summary: 'SCIM schemas',
    description: 'The core User and Group schemas, as supported here.',
  })
  @ApiOkResponse({ type: ScimSchemaListDto })
  @ScimErrors()
  listScimSchemas(@Req() req: Request): ListResponse {
    const all = schemas(scimBase(req));
    return listResponse(all.length, 1, all);
  }

  @Get('Schemas/:id')
  @ApiOperation({ summary: 'A SCIM schema', description: 'By its URN.' })
  @ApiParam({ name: 'id', example: 'urn:ietf:params:scim:schemas:core:2.0:User' })
  @ApiOkResponse({ type: ScimSchemaDto })
  @ScimErrors(404)
  getScimSchema(@Param('id') id: string, @Req() req: Request): Record<string, unknown> {
    const found = schemas(scimBase(req)).find((s) => String(s.id).toLowerCase() === id.toLowerCase());
    if (!found) throw scimError('scim_not_found', `Schema ${id} was not found`);
    return found;
  }
}
