import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../auth/access.decorators.js';
import { OpenApiDocument } from './openapi-document.js';

@ApiTags('OpenAPI Spec')
@Controller('api/v1/spec')
export class SpecController {
  constructor(private readonly document: OpenApiDocument) {}

  /**
   * An API route, so it needs a token like every other (the spec's rule); the same document is
   * public as documentation at /docs, which a browser must open without one.
   */
  @Get()
  @Authenticated()
  @ApiOperation({ summary: 'The OpenAPI 3.1 document of this API' })
  @ApiOkResponse({
    description: 'OpenAPI 3.1 document',
    schema: { type: 'object', additionalProperties: true },
  })
  getSpec(): object {
    return this.document.get();
  }
}
