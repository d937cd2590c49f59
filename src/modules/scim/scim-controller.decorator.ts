import { applyDecorators, Controller } from '@nestjs/common';
import { ApiHeader, ApiParam } from '@nestjs/swagger';
import { RequireActions } from '../../core/auth/access.decorators.js';
import { Action } from '../../core/auth/action.js';
import { ScimController } from './scim-openapi.js';

/** A SCIM resource type served under /api/scim/v2, by its endpoint (RFC 7644 section 3.2). */
export type ScimResourceEndpoint = 'Users' | 'Groups';

/** How the routes' documentation names one resource of a type. */
export type ScimResourceNoun = 'user' | 'group';

/**
 * The class decorators of a SCIM resource controller (Users, Groups), and the one place they
 * live: its path, SCIM's tag, media types, error shape and content type (`ScimController`, which
 * discovery shares), admin only. Applied in the order the stacked decorators were, bottom up.
 */
export const ScimResourceController = (endpoint: ScimResourceEndpoint) =>
  applyDecorators(RequireActions(Action.All), Controller(`api/scim/v2/${endpoint}`), ScimController());

/** The `id` path parameter of a single-resource route. */
export const ScimIdParam = (noun: ScimResourceNoun) =>
  ApiParam({ name: 'id', description: `The ${noun} id` });

/** The optional `If-Match` header of a route that changes a resource (412 when it does not match). */
export const ScimIfMatchHeader = (noun: ScimResourceNoun) =>
  ApiHeader({
    name: 'If-Match',
    required: false,
    description: `Only change the ${noun} if its version (ETag) is still this one; else 412`,
  });
