import type { OpenAPIObject } from '@nestjs/swagger';

export interface Operation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  /** The path with every parameter replaced by `value`. */
  concrete: (value: string) => string;
  operationId: string;
  public: boolean;
  op: Record<string, unknown>;
}

/** Every operation of the generated OpenAPI document. */
export function operations(document: OpenAPIObject): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete'] as const) {
      const op = (item as Record<string, Record<string, unknown> | undefined>)[method];
      if (!op) continue;
      out.push({
        method,
        path,
        concrete: (value) => path.replace(/\{[^}]+\}/g, value),
        operationId: op.operationId as string,
        // Public operations carry `security: [{}]` (no credential).
        public: !(op.security as object[] | undefined)?.some((r) => Object.keys(r).length > 0),
        op,
      });
    }
  }
  return out;
}
