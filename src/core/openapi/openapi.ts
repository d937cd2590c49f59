import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { accessRulesByOperation, documentErrorResponses } from './api-errors.decorator.js';
import { API_TAGS } from './openapi-tags.js';
import { documentIdempotency } from '../http/idempotency/idempotency.openapi.js';
import { documentConditionalRequests } from '../http/conditional/conditional.openapi.js';

export const API_VERSION = '1.0.0';

/**
 * The OpenAPI 3.1 document, generated from the controllers and DTOs. The committed copy in
 * `openapi/openapi.json` is checked against this by a test.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Analytics Platform Management API')
    .setDescription(
      'Manage deployments, workspace content, users and access, and embedding. ' +
        'Every route except the probes, the embed session exchange and the OAuth callback needs ' +
        'a token in the Authorization header: ' +
        '`Bearer <token>` (or `Api-Key <token>`). Errors share one shape: ' +
        '`{statusCode, error, message, code}`.',
    )
    .setVersion(API_VERSION)
    // Relative: the document describes the host that serves it.
    .addServer('/', 'This server')
    // Platform API tokens are opaque (`pat_...`), not JWTs: addBearerAuth would claim `bearerFormat: JWT`.
    .addSecurity('bearer', {
      type: 'http',
      scheme: 'bearer',
      description: 'Platform API token (`pat_` followed by 43 characters), opaque',
    })
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description: 'The same token as `Api-Key <token>`',
      },
      'apiKey',
    )
    .addSecurity('basicToken', {
      type: 'http',
      scheme: 'basic',
      description:
        'The same token as the password of HTTP Basic (any user name), as git sends it: the git routes of a deployment’s data model only',
    })
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'Embed token, from `POST /api/v1/embed/session/token`',
      },
      'embedToken',
    );
  for (const tag of API_TAGS) builder.addTag(tag.name, tag.description);
  const document = SwaggerModule.createDocument(app, builder.build(), {
    operationIdFactory: (_controller, method) => method,
  });
  documentErrorResponses(document, accessRulesByOperation(app));
  documentConditionalRequests(document);
  documentIdempotency(document);
  return sortKeys(unwrapSingleAllOf(document)) as OpenAPIObject;
}

/**
 * The generator wraps a described `$ref` in a one-element `allOf` (needed in OpenAPI 3.0, where
 * `$ref` ignores its siblings). In 3.1 a `$ref` may have siblings, so the wrapper only adds noise.
 */
function unwrapSingleAllOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unwrapSingleAllOf);
  if (!value || typeof value !== 'object') return value;
  const entries = Object.entries(value).map(([k, v]) => [k, unwrapSingleAllOf(v)] as const);
  const object = Object.fromEntries(entries) as Record<string, unknown>;
  const allOf = object.allOf;
  if (Array.isArray(allOf) && allOf.length === 1 && allOf[0] && typeof allOf[0] === 'object') {
    const { allOf: _unwrapped, ...siblings } = object;
    return { ...(allOf[0] as Record<string, unknown>), ...siblings };
  }
  return object;
}

/** Serves the Swagger UI at /docs from local assets, with the document embedded. */
export function setupSwaggerUi(app: INestApplication, document: () => OpenAPIObject): void {
  SwaggerModule.setup('docs', app, document, {
    raw: false,
    customSiteTitle: 'Analytics Platform API',
    swaggerOptions: { validatorUrl: null, persistAuthorization: true, displayOperationId: true },
  });
}

/**
 * Stable key order, so the committed document diffs cleanly. Example bodies keep the order they
 * are written in (already stable), which reads better than alphabetical.
 */
function sortKeys(value: unknown, within?: 'examples' | 'example-entry'): unknown {
  if (Array.isArray(value)) return value.map((v) => sortKeys(v));
  if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(object)
        .sort()
        .map((k) => {
          if (k === 'example' || (k === 'value' && within === 'example-entry')) return [k, object[k]];
          const next = within === 'examples' ? 'example-entry' : k === 'examples' ? 'examples' : undefined;
          return [k, sortKeys(object[k], next)];
        }),
    );
  }
  return value;
}
