import { Injectable } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';

/**
 * The OpenAPI document of `GET /api/v1/spec` and `/docs`, built on first use and kept: building
 * it walks every route and DTO (most of a second), which a process that never serves it (a
 * worker-less test app, a replica nobody browses) need not pay at start-up.
 */
@Injectable()
export class OpenApiDocument {
  private factory: (() => OpenAPIObject) | null = null;
  private document: OpenAPIObject | null = null;

  /** How to build the document, once the application's routes are known. */
  use(factory: () => OpenAPIObject): void {
    this.factory = factory;
    this.document = null;
  }

  get(): OpenAPIObject {
    if (!this.document) {
      if (!this.factory) throw new Error('The OpenAPI document has no factory yet');
      this.document = this.factory();
    }
    return this.document;
  }
}
