import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';

export const API_VERSION = '1.0.0';

/**
 * The OpenAPI 3.1 document, generated from the controllers and DTOs. The committed copy in
 * `openapi/openapi.json` is checked against this by a test.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Analytics Platform Management API')
    .setDescription(
      'Manage deployments, workspace content, users and access, and embedding. ' +
        'Every route except the probes and the embed session exchange needs a token in the ' +
        'Authorization header: ' +
        '`Bearer <token>` (or `Api-Key <token>`). Errors share one shape: ' +
        '`{statusCode, error, message, code}`.',
    )
    .setVersion(API_VERSION)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'Platform API token' }, 'bearer')
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description: 'The same token as `Api-Key <token>`',
      },
      'apiKey',
    )
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'JWT',
        description: 'Embed token, from `POST /api/v1/embed/session/token`',
      },
      'embedToken',
    )
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (_controller, method) => method,
  });
  return sortKeys(document) as OpenAPIObject;
}

/** Serves the Swagger UI at /docs from local assets, with the document embedded. */
export function setupSwaggerUi(app: INestApplication, document: OpenAPIObject): void {
  SwaggerModule.setup('docs', app, document, {
    raw: false,
    customSiteTitle: 'Analytics Platform API',
    swaggerOptions: { validatorUrl: null, persistAuthorization: true, displayOperationId: true },
  });
}

/** Stable key order, so the committed document diffs cleanly. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
