import { Injectable, ValidationPipe, type ArgumentMetadata } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { ApiError, coreError } from '../errors/api-error.js';
import { ERROR_CODES, isErrorCode, type ErrorCode } from '../errors/error-codes.js';

/** One message per bad field, each naming the field by its full path (`settings.locale ...`). */
export function flattenValidationErrors(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((e) => {
    const path = prefix ? `${prefix}.${e.property}` : e.property;
    const own = Object.values(e.constraints ?? {}).map((m) => {
      if (m.startsWith(`${e.property} `)) return `${path}${m.slice(e.property.length)}`;
      if (m.startsWith(`property ${e.property} `)) return `property ${path}${m.slice(9 + e.property.length)}`;
      return `${path}: ${m}`;
    });
    const unknownField = own.length === 0 && !e.children?.length ? [`${path} is invalid`] : [];
    return [...own, ...unknownField, ...flattenValidationErrors(e.children ?? [], path)];
  });
}

/**
 * The catalogue code a field's own check answers with (`context: { code }` on a constraint, as
 * `BranchNameField` sets it), when every failing field carries one and they agree; otherwise
 * null, and the refusal is `validation_failed`.
 */
export function sharedErrorCode(errors: ValidationError[]): ErrorCode | null {
  let code: string | null = null;
  const carries = (e: ValidationError): boolean => {
    if (e.constraints && Object.keys(e.constraints).length > 0) {
      const codes = Object.values(e.contexts ?? {})
        .map((c) => (c as { code?: unknown } | undefined)?.code)
        .filter((c): c is string => typeof c === 'string');
      if (codes.length === 0) return false;
      for (const c of codes) {
        code ??= c;
        if (c !== code) return false;
      }
    }
    return (e.children ?? []).every(carries);
  };
  return errors.every(carries) && code !== null && isErrorCode(code) ? code : null;
}

/**
 * Validates and converts every body, query and path DTO. Unknown fields are rejected, so a
 * removed field fails loudly instead of being ignored. An absent body counts as `{}`.
 */
@Injectable()
export class StrictValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      forbidUnknownValues: true,
      transform: true,
      transformOptions: { enableImplicitConversion: false, exposeUnsetFields: false },
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => {
        const code = sharedErrorCode(errors);
        const messages = flattenValidationErrors(errors);
        return code
          ? new ApiError(ERROR_CODES[code].status, code, messages)
          : coreError('validation_failed', messages);
      },
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // Path parameters are validated by their own pipes (IdPipe); converting them here first
    // would turn `1e3` into 1000 before IdPipe sees it.
    if (metadata.type === 'param') return value;
    if (metadata.type === 'body' && (value === undefined || value === null)) value = {};
    if (
      metadata.type === 'body' &&
      (typeof value !== 'object' || Array.isArray(value)) &&
      isClass(metadata.metatype)
    ) {
      throw coreError('validation_failed', ['The request body must be a JSON object']);
    }
    if ((metadata.type === 'body' || metadata.type === 'query') && isClass(metadata.metatype)) {
      const dropped = droppedKeys(value);
      if (dropped.length > 0) {
        throw coreError(
          'validation_failed',
          dropped.map((path) => `property ${path} should not exist`),
        );
      }
    }
    return super.transform(value, metadata);
  }
}

/**
 * Keys class-transformer skips at every level (its guard against prototype pollution), so they
 * would be dropped without a word instead of rejected like any other unknown field.
 */
const DROPPED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor']);

/** The paths of such keys, found without recursion (the body's depth is bounded, but no stack is needed). */
function droppedKeys(value: unknown): string[] {
  const found: string[] = [];
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    for (const [key, child] of Object.entries(v)) {
      const childPath = path ? `${path}.${key}` : key;
      if (DROPPED_KEYS.has(key)) found.push(childPath);
      else stack.push([child, childPath]);
    }
  }
  return found.sort();
}

function isClass(t: unknown): boolean {
  return typeof t === 'function' && ![String, Number, Boolean, Array, Object].includes(t as never);
}
