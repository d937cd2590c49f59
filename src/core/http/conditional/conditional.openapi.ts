import { getSchemaPath, type OpenAPIObject } from '@nestjs/swagger';
import { ERROR_CODES, isErrorCode, type ErrorCode } from '../../errors/error-codes.js';
import { ErrorResponseDto } from '../../errors/error-response.dto.js';
import { errorResponse } from '../../openapi/api-errors.decorator.js';

type Content = Record<string, { schema?: { $ref?: string }; examples?: Record<string, unknown> }>;
type ResponseObject = { description?: string; content?: Content; headers?: Record<string, unknown> };
type Parameter = { name?: string; in?: string };
export type Operation = {
  security?: Array<Record<string, unknown>>;
  parameters?: Parameter[];
  responses?: Record<string, ResponseObject>;
};

const WRITES = ['put', 'patch', 'delete'] as const;
const SEE = 'See docs/api-conventions.md, "Conditional requests".';

const ETAG_HEADER = {
  description:
    'The strong entity tag of this representation (a hash of its bytes). Send it back in `If-Match` ' +
    'to change or delete the resource only while it is unchanged, or in `If-None-Match` to read it ' +
    'only once it changed.',
  schema: { type: 'string', example: '"2c-9sAWHjQfjYqvA5yKdfmC0Nl1tzU"' },
};

const IF_NONE_MATCH_READ = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description: `Entity tags of representations the client holds (or \`*\`): when one is the current tag, the answer is 304 without a body. ${SEE}`,
  schema: { type: 'string' },
};

const IF_MATCH_WRITE = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description:
    'Act only while the resource is unchanged: the `ETag` of a GET of the same path (strong ' +
    'comparison; `*`: any current representation). When the current tag is not listed, the answer ' +
    `is 412 \`precondition_failed\` with the current \`ETag\`, and nothing is changed. ${SEE}`,
  schema: { type: 'string' },
};

const IF_NONE_MATCH_WRITE = {
  name: 'If-None-Match',
  in: 'header',
  required: false,
  description:
    '`*`: act only if the resource does not exist; or entity tags: act only if the current tag is ' +
    `none of them. Otherwise 412 \`precondition_failed\`, and nothing is changed. ${SEE}`,
  schema: { type: 'string' },
};

const RETRY_AFTER = {
  description: 'With `resource_busy`: seconds to wait before retrying.',
  schema: { type: 'string' },
};

/** The codes a write taking the preconditions may answer besides its own (412, 400, 409). */
export const CONDITIONAL_WRITE_CODES: readonly ErrorCode[] = [
  'precondition_failed',
  'invalid_precondition',
  'resource_busy',
];

/** Whether an operation answers its errors in a schema of its own (SCIM, whose rules are its own). */
function answersOwnErrors(op: Operation, errorRef: string): boolean {
  return Object.entries(op.responses ?? {}).some(
    ([status, r]) =>
      Number(status) >= 400 &&
      Object.values(r.content ?? {}).some((m) => m.schema?.$ref && m.schema.$ref !== errorRef),
  );
}

/** The security schemes an operation takes; null for a public one (`security: [{}]`). */
function schemes(op: Operation): Set<string> | null {
  const names = (op.security ?? []).flatMap((requirement) => Object.keys(requirement));
  return names.length === 0 ? null : new Set(names);
}

/**
 * Whether `read` is the GET a write's preconditions are evaluated with, as the middleware decides
 * (`ConditionalRoutes`): it takes no query parameter (a resource, not a page of a list) and every
 * credential the write takes.
 */
export function readsForWrite(read: Operation, write: Operation): boolean {
  if ((read.parameters ?? []).some((p) => p.in === 'query')) return false;
  const taken = schemes(read);
  if (taken === null) return true;
  const given = schemes(write);
  return given !== null && [...given].every((s) => taken.has(s));
}

function addParameter(op: Operation, parameter: Parameter): void {
  const parameters = (op.parameters ??= []);
  if (!parameters.some((p) => p.in === 'header' && p.name?.toLowerCase() === parameter.name?.toLowerCase()))
    parameters.push(parameter);
}

/** Adds `code` to the error response of its status, written as `documentErrorResponses` writes it. */
function addCode(responses: Record<string, ResponseObject>, code: ErrorCode, errorRef: string): void {
  const status = String(ERROR_CODES[code].status);
  const current = responses[status];
  const codes = Object.keys(current?.content?.['application/json']?.examples ?? {}).filter(isErrorCode);
  if (!codes.includes(code)) codes.push(code);
  const response: ResponseObject = errorResponse(Number(status), codes, errorRef);
  if (current?.headers) response.headers = current.headers;
  responses[status] = response;
}

/**
 * Documents conditional requests (`conditional-requests.ts`) on every path with a PUT, PATCH or
 * DELETE, outside operations that answer errors in a schema of their own (SCIM):
 * - its GET: the `ETag` of the 200, the optional `If-None-Match` and the 304 it answers;
 * - each write whose GET qualifies ({@link readsForWrite}): the optional `If-Match` and
 *   `If-None-Match`, the 412 `precondition_failed` (with the current `ETag`), 400
 *   `invalid_precondition` and 409 `resource_busy` (with `Retry-After`), in the one error shape;
 * - each other write: 400 `precondition_unsupported`.
 */
export function documentConditionalRequests(document: OpenAPIObject): void {
  const errorRef = getSchemaPath(ErrorResponseDto);
  for (const item of Object.values(document.paths ?? {})) {
    const ops = item as Record<string, Operation | undefined>;
    const writes = WRITES.flatMap((m) => (ops[m] ? [ops[m]] : [])).filter(
      (op) => !answersOwnErrors(op, errorRef),
    );
    if (writes.length === 0) continue;
    const read = ops.get && !answersOwnErrors(ops.get, errorRef) ? ops.get : undefined;
    if (read) {
      addParameter(read, IF_NONE_MATCH_READ);
      const responses = (read.responses ??= {});
      for (const [status, response] of Object.entries(responses))
        if (/^2\d\d$/.test(status)) response.headers = { ...response.headers, ETag: ETAG_HEADER };
      responses['304'] = {
        description: 'Not modified: the current tag is one of `If-None-Match`. No body.',
        headers: { ETag: ETAG_HEADER },
      };
    }
    for (const op of writes) {
      const responses = (op.responses ??= {});
      if (!read || !readsForWrite(read, op)) {
        addCode(responses, 'precondition_unsupported', errorRef);
        continue;
      }
      addParameter(op, IF_MATCH_WRITE);
      addParameter(op, IF_NONE_MATCH_WRITE);
      for (const code of CONDITIONAL_WRITE_CODES) addCode(responses, code, errorRef);
      responses['412'].headers = {
        ETag: { ...ETAG_HEADER, description: 'The current entity tag of the resource.' },
      };
      responses['409'].headers = { ...responses['409'].headers, 'Retry-After': RETRY_AFTER };
    }
  }
}
