import type { OpenAPIObject } from '@nestjs/swagger';
import { getSchemaPath } from '@nestjs/swagger';
import { ERROR_CODES, isErrorCode, type ErrorCode } from '../../errors/error-codes.js';
import { ErrorResponseDto } from '../../errors/error-response.dto.js';
import { errorResponse } from '../../openapi/api-errors.decorator.js';
import { IDEMPOTENCY_KEY_HEADER, MAX_KEY_LENGTH, REPLAYED_HEADER } from './idempotency-request.js';

/** The codes a POST taking `Idempotency-Key` may answer besides its own. */
export const IDEMPOTENCY_CODES: readonly ErrorCode[] = [
  'invalid_idempotency_key',
  'idempotency_key_in_progress',
  'idempotency_key_reused',
];

const KEY_DESCRIPTION =
  'Makes a retry of this request safe: the first answer under the key (its status, body, ' +
  '`Content-Type`, `Location` and `ETag`) is kept 24 hours, and a repeat of the same request ' +
  '(method, path and query, caller, body) gets it again with `Idempotent-Replayed: true`, without ' +
  'acting again. The same key with another request answers 422 `idempotency_key_reused`; a repeat ' +
  'while the first still runs answers 409 `idempotency_key_in_progress` with `Retry-After`. ' +
  `1 to ${MAX_KEY_LENGTH} printable ASCII characters (a UUID is a good key), bare or as a ` +
  'Structured Field string (`"..."`). Answers 5xx and 429 are not kept. See ' +
  'docs/api-conventions.md, "Idempotent retries".';

/** RFC 7644's error message schema, the `schemas` of a SCIM error. */
const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

const REPLAYED_DESCRIPTION =
  '`true` when this answer is the kept answer of an earlier request with the same `Idempotency-Key`.';

type Content = Record<string, { schema?: { $ref?: string }; examples?: Record<string, unknown> }>;
type ResponseObject = { description?: string; content?: Content; headers?: Record<string, unknown> };
type Operation = {
  security?: unknown[];
  parameters?: Array<{ name?: string; in?: string }>;
  requestBody?: { content?: Record<string, unknown> };
  responses?: Record<string, ResponseObject>;
};

/**
 * Whether the idempotency interceptor acts on an operation, read from the document: a POST that
 * takes a token (not `security: [{}]`) and whose body is parsed, JSON or multipart (not one of
 * git's streamed requests). Every POST handler is `@Audited()`, which puts the interceptor on it.
 */
export function takesIdempotencyKey(method: string, op: Operation): boolean {
  if (method !== 'post') return false;
  if (op.security?.length === 1 && Object.keys(op.security[0] as object).length === 0) return false;
  const media = Object.keys(op.requestBody?.content ?? {});
  return (
    media.length === 0 ||
    media.some((m) => /^application\/([\w.-]+\+)?json$/.test(m) || m === 'multipart/form-data')
  );
}

/**
 * Documents `Idempotency-Key` on every operation it applies to: the optional header, the
 * `Idempotent-Replayed` header of its successes, and its error codes (400, 409, 422), merged into
 * the responses `documentErrorResponses` wrote, in the same form. An operation answering errors in
 * a schema of its own (SCIM) gets the codes named in its responses' descriptions.
 */
export function documentIdempotency(document: OpenAPIObject): void {
  const errorRef = getSchemaPath(ErrorResponseDto);
  for (const item of Object.values(document.paths ?? {})) {
    const op = (item as Record<string, Operation | undefined>).post;
    if (!op || !takesIdempotencyKey('post', op)) continue;
    const parameters = (op.parameters ??= []);
    if (!parameters.some((p) => p.in === 'header' && p.name === IDEMPOTENCY_KEY_HEADER)) {
      parameters.push({
        name: IDEMPOTENCY_KEY_HEADER,
        in: 'header',
        required: false,
        description: KEY_DESCRIPTION,
        schema: { type: 'string', minLength: 1, maxLength: MAX_KEY_LENGTH },
      } as (typeof parameters)[number]);
    }
    const responses = (op.responses ??= {});
    for (const [status, response] of Object.entries(responses)) {
      if (!/^2\d\d$/.test(status)) continue;
      response.headers = {
        ...response.headers,
        [REPLAYED_HEADER]: { description: REPLAYED_DESCRIPTION, schema: { type: 'string', enum: ['true'] } },
      };
    }
    const foreign = Object.entries(responses).some(
      ([status, r]) =>
        Number(status) >= 400 &&
        Object.values(r.content ?? {}).some((m) => m.schema?.$ref && m.schema.$ref !== errorRef),
    );
    for (const code of IDEMPOTENCY_CODES)
      if (foreign) nameCode(responses, code);
      else addCode(responses, code, errorRef);
  }
}

/** Adds `code` to the error response of its status, written as `documentErrorResponses` writes it. */
function addCode(responses: Record<string, ResponseObject>, code: ErrorCode, errorRef: string): void {
  const status = ERROR_CODES[code].status;
  const current = responses[String(status)];
  const codes = Object.keys(current?.content?.['application/json']?.examples ?? {}).filter(isErrorCode);
  if (!codes.includes(code)) codes.push(code);
  responses[String(status)] = errorResponse(status, codes, errorRef);
}

/**
 * Names `code` in the response of its status, for an operation answering errors in a schema of its
 * own (SCIM's): in the description, and as an example in that schema's shape (RFC 7644's error,
 * with no `scimType`, which has no value for these).
 */
function nameCode(responses: Record<string, ResponseObject>, code: ErrorCode): void {
  const status = ERROR_CODES[code].status;
  const line = `\`${code}\`: ${ERROR_CODES[code].meaning}`;
  const example = {
    summary: code,
    value: { schemas: [SCIM_ERROR_SCHEMA], status: String(status), detail: ERROR_CODES[code].meaning },
  };
  const model = Object.entries(responses).find(([s, r]) => Number(s) >= 400 && r.content)?.[1];
  const current = (responses[String(status)] ??= {
    description: '',
    content: Object.fromEntries(
      Object.entries(model?.content ?? {}).map(([media, m]) => [media, { schema: m.schema }]),
    ),
  });
  if (!current.description?.includes(`\`${code}\``))
    current.description = current.description ? `${current.description}\n\n${line}` : line;
  for (const media of Object.values(current.content ?? {}))
    media.examples = { ...media.examples, [code]: example };
}
