import { STATUS_CODES } from 'node:http';
import { applyDecorators, type INestApplication } from '@nestjs/common';
import { ModulesContainer } from '@nestjs/core';
import { ApiExtension, ApiExtraModels, getSchemaPath, type OpenAPIObject } from '@nestjs/swagger';
import { ACCESS_METADATA, type AccessRule } from '../auth/access.decorators.js';
import { ERROR_CODES, type ErrorCode } from '../errors/error-codes.js';
import { ErrorResponseDto } from '../errors/error-response.dto.js';

/** Where `@ApiErrors` leaves a route's codes for {@link documentErrorResponses}. */
const ROUTE_CODES = 'x-error-codes';

/**
 * Documents the error codes a route answers besides those of its access rule (401, 403 and 429
 * come from `@RequireActions` and its siblings). Statuses and meanings come from the catalogue;
 * {@link documentErrorResponses} turns the codes into one response per status.
 */
export const ApiErrors = (...codes: [ErrorCode, ...ErrorCode[]]) =>
  applyDecorators(ApiExtension(ROUTE_CODES, codes), ApiExtraModels(ErrorResponseDto));

/** What a route's access rule can answer before the handler runs (the limiter skips only the probes). */
function accessCodes(rule: AccessRule | undefined): ErrorCode[] {
  if (!rule || rule.kind === 'public') return [];
  if (rule.kind === 'embed' || rule.kind === 'authenticated') return ['unauthorized', 'rate_limited'];
  return ['unauthorized', 'forbidden', 'rate_limited'];
}

/**
 * The access rule of every route by operation id (the handler's name, see `buildOpenApiDocument`),
 * read as the guard reads it: the handler's own, else its controller's.
 */
export function accessRulesByOperation(app: INestApplication): Map<string, AccessRule | undefined> {
  const rules = new Map<string, AccessRule | undefined>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = (controller.prototype as Record<string, unknown>)[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const rule =
          (Reflect.getMetadata(ACCESS_METADATA, handler) as AccessRule | undefined) ??
          (Reflect.getMetadata(ACCESS_METADATA, controller) as AccessRule | undefined);
        if (rules.has(name) && JSON.stringify(rules.get(name)) !== JSON.stringify(rule)) {
          throw new Error(
            `Two handlers named ${name} have different access rules; operation ids must be unique`,
          );
        }
        rules.set(name, rule);
      }
    }
  }
  return rules;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

type Operation = {
  responses?: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }>;
} & Record<string, unknown>;

/**
 * Gives each operation one error response per status, from the codes of its access rule (401,
 * 403, 429) and those of {@link ApiErrors}: a description listing the codes and one example per
 * code, in the one error shape. Rules declared on a controller also give its operations their
 * `x-required-actions`. An operation that documents its errors in another schema (SCIM) keeps
 * them.
 */
export function documentErrorResponses(
  document: OpenAPIObject,
  rules: ReadonlyMap<string, AccessRule | undefined>,
): void {
  const errorRef = getSchemaPath(ErrorResponseDto);
  for (const item of Object.values(document.paths ?? {})) {
    for (const method of METHODS) {
      const op = (item as Record<string, Operation | undefined>)[method];
      if (!op) continue;
      const rule = rules.get(String(op.operationId));
      if (rule && (rule.kind === 'actions' || rule.kind === 'object'))
        op['x-required-actions'] ??= rule.actions;
      const access = accessCodes(rule);
      const own = (op[ROUTE_CODES] as ErrorCode[] | undefined) ?? [];
      delete op[ROUTE_CODES];
      const responses = (op.responses ??= {});
      const foreign = Object.entries(responses).some(
        ([status, r]) =>
          Number(status) >= 400 &&
          Object.values(r.content ?? {}).some((m) => m.schema?.$ref && m.schema.$ref !== errorRef),
      );
      if (foreign) continue;
      const byStatus = new Map<number, ErrorCode[]>();
      for (const code of [...access, ...own]) {
        const list = byStatus.get(ERROR_CODES[code].status) ?? [];
        if (!list.includes(code)) list.push(code);
        byStatus.set(ERROR_CODES[code].status, list);
      }
      for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
        responses[String(status)] = errorResponse(status, codes, errorRef);
      }
    }
  }
}

/** One error response of {@link documentErrorResponses}: the codes of a status, with an example each. */
export function errorResponse(status: number, codes: readonly ErrorCode[], errorRef: string) {
  const description = codes.map((c) => `\`${c}\`: ${ERROR_CODES[c].meaning}`).join('\n\n');
  const examples = Object.fromEntries(
    codes.map((code) => [
      code,
      {
        summary: code,
        value: {
          statusCode: status,
          error: STATUS_CODES[status] ?? 'Error',
          message: exampleMessage(code),
          code,
        },
      },
    ]),
  );
  return { description, content: { 'application/json': { schema: { $ref: errorRef }, examples } } };
}

function exampleMessage(code: ErrorCode): string | string[] {
  if (code === 'validation_failed') return ['name must be shorter than or equal to 255 characters'];
  return ERROR_CODES[code].meaning.replace(/`/g, '');
}
