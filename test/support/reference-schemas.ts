import fs from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

/**
 * Checks an answer's body against the reference platform's response schema for the same
 * operation, so the clients generated from its OpenAPI document can read our answers:
 *
 * ```ts
 * expectReferenceBody('getExportStatus', 200, res.body);
 * ```
 *
 * The schemas come from `test/fixtures/reference/response-schemas.json`, extracted from the
 * reference document by `scripts/extract-reference-schemas.mjs` (README there), which lists the
 * operations kept. Fields the reference does not declare are allowed (its schemas do not close
 * their objects, and its clients ignore what they do not know); a required field missing, a
 * wrong type, a value outside an enum, or a malformed `date-time` fails.
 */
export const REFERENCE_SCHEMAS = path.join(process.cwd(), 'test/fixtures/reference/response-schemas.json');

interface Extract {
  operations: Record<string, { method: string; path: string; responses: Record<string, object | null> }>;
  schemas: Record<string, object>;
}

let compiled: { extract: Extract; ajv: Ajv2020; validators: Map<string, ValidateFunction> } | undefined;

function load() {
  if (compiled) return compiled;
  const extract = JSON.parse(fs.readFileSync(REFERENCE_SCHEMAS, 'utf8')) as Extract;
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  // OpenAPI's formats: date-time and date are checked (RFC 3339, as the reference's clients parse it);
  // numeric formats are ranges a JSON number always fits, `binary` is not JSON.
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (s: string) =>
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(s) &&
      !Number.isNaN(Date.parse(s)),
  });
  // A `date` is a full-date only, so a `oneOf` of date and date-time holds exactly one of them.
  ajv.addFormat('date', { type: 'string', validate: (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s) });
  for (const f of ['int32', 'int64', 'double', 'float', 'binary', 'uri', 'email', 'uuid'])
    ajv.addFormat(f, true);
  ajv.addSchema({ $id: 'reference', components: { schemas: extract.schemas } });
  compiled = { extract, ajv, validators: new Map() };
  return compiled;
}

/** The problems of `body` against the reference's schema of that operation's `status` answer. */
export function referenceBodyProblems(operationId: string, status: number, body: unknown): string[] {
  const { extract, ajv, validators } = load();
  const operation = extract.operations[operationId];
  if (!operation)
    throw new Error(`${operationId} is not in ${REFERENCE_SCHEMAS}: add it to the extraction script`);
  const key = `${operationId} ${status}`;
  let validate = validators.get(key);
  if (!validate) {
    if (!(String(status) in operation.responses))
      throw new Error(`the reference documents no ${status} answer for ${operationId}`);
    const schema = operation.responses[String(status)];
    if (schema === null) throw new Error(`the reference's ${status} answer of ${operationId} is not JSON`);
    validate = ajv.compile(rebase(schema));
    validators.set(key, validate);
  }
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message ?? e.keyword}`);
}

/** Fails the test, naming every problem, when `body` does not match the reference's schema. */
export function expectReferenceBody(operationId: string, status: number, body: unknown): void {
  const problems = referenceBodyProblems(operationId, status, body);
  if (problems.length > 0)
    throw new Error(
      `${operationId} ${status}: body does not match the reference schema:\n  ${problems.join('\n  ')}`,
    );
}

/** The operation's schema with its `#/components/...` references pointing into the added document. */
function rebase(schema: object): object {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"reference#/components/')) as object;
}
