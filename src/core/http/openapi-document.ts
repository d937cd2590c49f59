import { Injectable } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';

/** Holds the document built once at start-up, for `GET /api/v1/spec`. */
@Injectable()
export class OpenApiDocument {
  private document: OpenAPIObject | null = null;

  set(document: OpenAPIObject): void {
    this.document = document;
  }

  get(): OpenAPIObject {
    if (!this.document) throw new Error('The OpenAPI document has not been built yet');
    return this.document;
  }
}
