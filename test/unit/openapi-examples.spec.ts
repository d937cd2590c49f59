import fs from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { ERROR_CODES, isErrorCode } from '../../src/core/errors/error-codes.js';
import { TOKEN_PATTERN } from '../../src/core/auth/token.js';

/** The examples of the committed OpenAPI document (`openapi/openapi.json`, checked fresh by openapi.e2e). */
type Example = { summary?: string; value: Record<string, unknown> };
type Media = { schema?: { $ref?: string }; examples?: Record<string, Example> };
type Response = { description?: string; content?: Record<string, Media> };
type Operation = {
  operationId: string;
  requestBody?: { content?: Record<string, Media> };
  responses: Record<string, Response>;
};

const doc = JSON.parse(fs.readFileSync('openapi/openapi.json', 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
};
const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, op]) => ({ where: `${method} ${path}`, path, op })),
);
const byId = (id: string) => operations.find(({ op }) => op.operationId === id)!.op;

const ERROR_REF = '#/components/schemas/ErrorResponseDto';
const SCIM_REF = '#/components/schemas/ScimErrorDto';
const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
/** The RFC 7644 `scimType` values the catalogue holds as codes. */
const SCIM_TYPES = new Set([
  'invalidFilter',
  'invalidSyntax',
  'invalidPath',
  'invalidValue',
  'noTarget',
  'mutability',
  'tooMany',
  'uniqueness',
]);

describe('the OpenAPI document’s error examples', () => {
  it('show, on every error response, the response’s own status and a code of that status', () => {
    const wrong: unknown[] = [];
    let responses = 0;
    for (const { where, path, op } of operations) {
      // The readiness probe's 503 carries the readiness report, not an error.
      if (path.startsWith('/health/')) continue;
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400) continue;
        responses += 1;
        const scim = path.startsWith('/api/scim/');
        const media = Object.entries(response.content ?? {});
        if (media.length === 0) wrong.push({ where, status, problem: 'no body' });
        for (const [type, { schema, examples }] of media) {
          const entries = Object.entries(examples ?? {});
          if (schema?.$ref !== (scim ? SCIM_REF : ERROR_REF) || entries.length === 0)
            wrong.push({ where, status, type, problem: 'schema or examples', ref: schema?.$ref });
          for (const [code, { value }] of entries) {
            const expected = scim
              ? {
                  schemas: [SCIM_ERROR_SCHEMA],
                  status,
                  ...(SCIM_TYPES.has(code) ? { scimType: code } : {}),
                  detail: expect.any(String),
                }
              : {
                  statusCode: Number(status),
                  error: STATUS_CODES[Number(status)],
                  message: expect.anything(),
                  code,
                };
            const catalogued = isErrorCode(code) && ERROR_CODES[code].status === Number(status);
            if (!catalogued || !matches(value, expected))
              wrong.push({ where, status, type, code, catalogued, value });
          }
        }
      }
    }
    expect(wrong).toEqual([]);
    // Every operation documents 401 at least: a broken walk would check nothing.
    expect(responses).toBeGreaterThan(880);
  });

  it('create no admin in the createUser examples', () => {
    const examples = byId('createUser').requestBody!.content!['application/json'].examples!;
    expect(Object.keys(examples).length).toBeGreaterThan(0);
    for (const [name, { value }] of Object.entries(examples)) {
      expect({ name, isAdmin: value.isAdmin ?? false, roles: value.defaultRoles ?? [] }).toEqual({
        name,
        isAdmin: false,
        roles: expect.not.arrayContaining(['Admin']),
      });
    }
  });

  it('illustrate creating an API key: the request and the key it answers, with its secret', () => {
    const op = byId('createApiKey');
    const requests = Object.values(op.requestBody!.content!['application/json'].examples ?? {});
    expect(requests.length).toBeGreaterThan(0);
    for (const { value } of requests)
      expect(value).toEqual(expect.objectContaining({ name: expect.any(String) }));
    const answers = Object.values(op.responses['200'].content!['application/json'].examples ?? {});
    expect(answers.length).toBeGreaterThan(0);
    for (const { value } of answers) {
      expect(value).toEqual({
        id: expect.any(Number),
        name: expect.any(String),
        prefix: expect.any(String),
        userId: expect.any(Number),
        createdAt: expect.any(String),
        lastUsedAt: null,
        expiresAt: null,
        token: expect.stringMatching(/^pat_[A-Za-z0-9_-]{43}$/),
      });
      expect(TOKEN_PATTERN.test(value.token as string)).toBe(true);
      expect((value.token as string).startsWith(value.prefix as string)).toBe(true);
    }
  });
});

/** Jest's deep equality, asymmetric matchers included, as a boolean. */
function matches(actual: unknown, expected: unknown): boolean {
  try {
    expect(actual).toEqual(expected);
    return true;
  } catch {
    return false;
  }
}
