import { OpenApiDocument } from '../../src/core/openapi/openapi-document.js';
import { bearer, newUser, startApp, type TestApp } from '../support/app.js';
import { newDeployment } from '../support/reports.js';
import { operations, type Operation } from '../support/routes.js';

/** The operations whose request bodies the document illustrates with named examples. */
const MAIN_OPERATIONS = [
  'createDeployment',
  'updateDeployment',
  'createFolder',
  'updateFolder',
  'createWorkbook',
  'updateWorkbook',
  'upsertWorkbookBySlug',
  'createReport',
  'updateReport',
  'upsertReportByPublicId',
  'connectReportToWorkbook',
  'disconnectReportFromWorkbook',
  'refreshReport',
  'createUser',
  'updateUser',
  'replaceUserPolicies',
  'createRole',
  'updateRole',
  'createUserGroup',
  'replaceUserGroupPolicies',
  'provisionEmbedUser',
  'provisionEmbedUsers',
  'generateSession',
  'postTokenBySessionId',
  'revokeSession',
  'createScimUser',
  'createApiKey',
];

/**
 * Examples that name no resource beyond those of the path (which the test creates), so they
 * must succeed as written. The others may meet a domain 4xx (an unknown folder 7, group
 * `analysts` or session id), never a validation error.
 */
const MUST_SUCCEED = new Set([
  'createDeployment managed',
  'updateDeployment rename',
  'createFolder root',
  'updateFolder rename',
  'updateFolder reorder',
  'createWorkbook root',
  'updateWorkbook rename',
  'updateWorkbook move',
  'upsertWorkbookBySlug upsert',
  'createReport sql',
  'upsertReportByPublicId upsert',
  'connectReportToWorkbook sheets',
  'connectReportToWorkbook excel',
  'createUser developer',
  'createUser viewer',
  'updateUser roles',
  'updateUser deactivate',
  'replaceUserPolicies none',
  'replaceUserGroupPolicies none',
  'updateRole rename',
  'createUserGroup finance',
  'provisionEmbedUser minimal',
  'createScimUser okta',
  'createApiKey ci',
  'createApiKey expiring',
]);

/** Codes of a refused request shape, as opposed to a domain answer about existing data. */
const VALIDATION_CODES = new Set([
  'validation_failed',
  'malformed_json',
  'bad_request',
  'unknown_query_parameter',
]);

type Examples = Record<string, { summary: string; value: unknown }>;

function examplesOf(op: Operation): Examples | undefined {
  const body = op.op.requestBody as { content?: Record<string, { examples?: Examples }> } | undefined;
  return body?.content?.['application/json']?.examples;
}

describe('OpenAPI request body examples', () => {
  let t: TestApp;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    t = await startApp();
    const auth = bearer(t.admin.token);
    const deploymentId = await newDeployment(t, t.admin, 'Examples');
    const base = `/api/v1/deployments/${deploymentId}`;
    const created = async (path: string, body: object): Promise<string> => {
      const res = await t.http().post(path).set(auth).send(body);
      if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return String(res.body.id);
    };
    ids.deploymentId = String(deploymentId);
    ids.folderId = await created(`${base}/folders`, { name: 'Fixtures' });
    ids.workbookId = await created(`${base}/workbooks`, { name: 'Fixtures' });
    ids.reportId = await created(`${base}/reports`, { name: 'Fixtures' });
    ids.roleId = await created('/api/v1/roles', { name: 'Fixtures', policies: [] });
    ids.groupId = await created('/api/v1/groups', { name: 'Fixtures' });
    ids.userId = String((await newUser(t, t.admin)).userId);
  });
  afterAll(() => t.close());

  /** A concrete path: every parameter names a resource the test created. */
  function concrete(op: Operation): string {
    return op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      if (name === 'id' && op.path.startsWith('/api/v1/groups/')) return ids.groupId;
      if (name === 'id' && op.path.startsWith('/api/v1/users/')) return ids.userId;
      const fixed: Record<string, string> = {
        embedTenantName: 'acme-co',
        publicId: 'OrdStatus002',
        slug: 'sales-overview',
      };
      const value = ids[name] ?? fixed[name];
      if (!value) throw new Error(`no value for {${name}} in ${op.path}`);
      return value;
    });
  }

  it('documents named examples on the main operations', () => {
    const ops = operations(t.app.get(OpenApiDocument).get());
    for (const operationId of MAIN_OPERATIONS) {
      const op = ops.find((o) => o.operationId === operationId);
      expect({ operationId, examples: Object.keys(examplesOf(op!) ?? {}).length > 0 }).toEqual({
        operationId,
        examples: true,
      });
    }
  });

  it('accepts every documented example: no validation error, no 5xx, success where nothing else is named', async () => {
    const ops = operations(t.app.get(OpenApiDocument).get()).filter((o) => examplesOf(o));
    const sent: string[] = [];
    for (const op of ops) {
      for (const [name, example] of Object.entries(examplesOf(op)!)) {
        const where = `${op.operationId} ${name}`;
        const req = t
          .http()
          [op.method](concrete(op))
          .send(example.value as object);
        const res = await (op.public ? req : req.set(bearer(t.admin.token)));
        const body = res.body as { code?: string; scimType?: string };
        const refused =
          res.status === 400 && (VALIDATION_CODES.has(body.code ?? '') || body.scimType !== undefined);
        const ok = MUST_SUCCEED.has(where) ? res.status < 300 : res.status < 500;
        // status and code are on both sides only to show them when the check fails.
        expect({ where, ok, refused, status: res.status, code: body.code }).toEqual({
          where,
          ok: true,
          refused: false,
          status: res.status,
          code: body.code,
        });
        sent.push(where);
      }
    }
    // Every example that must succeed was found and sent.
    expect([...MUST_SUCCEED].filter((where) => !sent.includes(where))).toEqual([]);
  });
});
