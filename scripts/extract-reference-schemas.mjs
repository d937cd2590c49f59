// Extracts, from the reference platform's OpenAPI 3.1 document, the response schemas of the
// operations whose bodies our tests check against it, and writes
// test/fixtures/reference/response-schemas.json (see the README there).
//
//   node scripts/extract-reference-schemas.mjs [platform-api.openapi.yaml] [out.json]
//
// Keeps, per operation below, its method, path and each success response's JSON schema, plus the
// component schemas reachable from them through `$ref`, with only the keywords validation needs
// (descriptions, examples and the document's prose are dropped). The output is stable (keys
// sorted), so re-running on the same document gives the same file.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

/** The operations (operationId) whose answers the tests validate. */
export const OPERATIONS = [
  'downloadExport',
  'getExportStatus',
  'startExport',
  'listEmbedTenantWorkbooks',
  'sharedWorkspaceObjects',
  'createDashboardComment',
  'listDashboardComments',
  'listMentionableEmbedUsers',
  'removeDashboardComment',
  'setDashboardCommentResolved',
  'updateDashboardComment',
];

/** Schema keywords kept; everything else (descriptions, examples, `x-` extensions) is dropped. */
const KEPT = new Set([
  '$ref',
  'additionalProperties',
  'allOf',
  'anyOf',
  'const',
  'enum',
  'format',
  'items',
  'maxItems',
  'maxLength',
  'maximum',
  'minItems',
  'minLength',
  'minimum',
  'oneOf',
  'pattern',
  'prefixItems',
  'properties',
  'required',
  'type',
]);
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const PREFIX = '#/components/schemas/';

/** `schema` with only the kept keywords, recursively; `refs` collects the components named. */
function strip(schema, refs) {
  if (Array.isArray(schema)) return schema.map((s) => strip(s, refs));
  if (!schema || typeof schema !== 'object') return schema;
  const out = {};
  for (const key of Object.keys(schema).sort()) {
    if (!KEPT.has(key)) continue;
    const value = schema[key];
    if (key === '$ref') {
      if (!value.startsWith(PREFIX)) throw new Error(`unsupported $ref ${value}`);
      refs.add(value.slice(PREFIX.length));
      out[key] = value;
    } else if (key === 'properties') {
      out[key] = Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((p) => [p, strip(value[p], refs)]),
      );
    } else if (['enum', 'const', 'required', 'type', 'pattern', 'format'].includes(key)) {
      out[key] = value;
    } else {
      out[key] = typeof value === 'object' ? strip(value, refs) : value;
    }
  }
  return out;
}

export function extract(doc) {
  const operations = {};
  const refs = new Set();
  for (const [p, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op || !OPERATIONS.includes(op.operationId)) continue;
      const responses = {};
      for (const status of Object.keys(op.responses ?? {}).sort()) {
        if (!/^2\d\d$/.test(status)) continue;
        const json = op.responses[status].content?.['application/json'];
        responses[status] = json ? strip(json.schema ?? {}, refs) : null;
      }
      operations[op.operationId] = { method, path: p, responses };
    }
  }
  const missing = OPERATIONS.filter((id) => !operations[id]);
  if (missing.length > 0) throw new Error(`operations not in the document: ${missing.join(', ')}`);
  const schemas = {};
  const queue = [...refs];
  while (queue.length > 0) {
    const name = queue.pop();
    if (schemas[name]) continue;
    const found = doc.components?.schemas?.[name];
    if (!found) throw new Error(`component ${name} not in the document`);
    const more = new Set();
    schemas[name] = strip(found, more);
    queue.push(...[...more].filter((n) => !schemas[n]));
  }
  const sortKeys = (o) =>
    Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, o[k]]),
    );
  return { operations: sortKeys(operations), schemas: sortKeys(schemas) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const source = process.argv[2] ?? '../shared/spec/reference/platform-api.openapi.yaml';
  const out = process.argv[3] ?? 'test/fixtures/reference/response-schemas.json';
  const result = extract(parse(fs.readFileSync(source, 'utf8')));
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(
    `${out}: ${Object.keys(result.operations).length} operations, ${Object.keys(result.schemas).length} schemas`,
  );
}
