import { STATUS_CODES } from 'node:http';
import { BuiltInRoleNames1764200000010 } from '../../migrations/1764200000010-BuiltInRoleNames.js';
import { ERROR_CODES, isErrorCode } from '../../src/core/errors/error-codes.js';
import { OpenApiDocument } from '../../src/core/openapi/openapi-document.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { insertReport, insertWorkbook, newDeployment } from '../support/reports.js';
import { operations, type Operation } from '../support/routes.js';

type ErrorExample = { value: { statusCode: number; error: string; message: unknown; code: string } };
type Response = {
  description?: string;
  content?: Record<string, { schema?: { $ref?: string }; examples?: Record<string, ErrorExample> }>;
};

const MISSING_ID = '2000000000';
/** The deletes that answer a body: the reference documents one for each, and its clients parse it. */
const DELETES_WITH_BODY = new Set([
  'delete /api/v1/deployments/{deploymentId}',
  // `{"success": true}`, where the reference documents a JSON body without a schema.
  'delete /api/v1/deployments/{deploymentId}/folders/{folderId}',
  'delete /api/v1/deployments/{deploymentId}/workbooks/{workbookId}',
  'delete /api/v1/deployments/{deploymentId}/reports/{reportId}',
  'delete /api/v1/users/{id}',
  'delete /api/v1/oauth-integrations/{id}',
  'delete /api/v1/oidc-token-configs/{id}',
  'delete /api/v1/user-oauth-tokens/{integrationId}',
  'delete /api/v1/embed/dashboard/{publicId}/comments/{commentId}',
  // The data model's writes answer the reference's `{success}` (DataModelWriteResponse).
  'delete /build/api/v1/deployments/{deploymentId}/branches',
  'delete /build/api/v1/deployments/{deploymentId}/data-model/files',
  'delete /build/api/v1/deployments/{deploymentId}/dev-mode',
  'delete /api/v1/deployments/{deploymentId}/reports/{reportId}/connect-workbook',
  // Cancelling a dbt sync answers the reference's `{message}` (DbtSyncCancelResponse).
  'delete /api/v1/deployments/{deploymentId}/dbt-sync/{syncJobId}',
]);

describe('One vocabulary: success statuses, built-in roles, error codes', () => {
  let t: TestApp;
  let other: Actor;
  let deploymentId: number;
  let theirDeploymentId: number;
  const responsesOf = (op: Operation) => op.op.responses as Record<string, Response>;
  const where = (op: Operation) => `${op.method} ${op.path}`;
  /** Operations of the Platform API (SCIM answers in its own error schema, the probes in theirs). */
  const platformOperations = () =>
    operations(t.app.get(OpenApiDocument).get()).filter(
      (op) => !op.path.startsWith('/api/scim/') && !op.path.startsWith('/health/'),
    );

  beforeAll(async () => {
    t = await startApp();
    other = await newAccount(t, 'globex');
    deploymentId = await newDeployment(t, t.admin);
    theirDeploymentId = await newDeployment(t, other);
  });
  afterAll(() => t.close());

  describe('deletes answer what the reference documents', () => {
    it('200 {"success": true} for users, folders, workbooks, reports, OAuth integrations, user OAuth tokens and OIDC token configs', async () => {
      const user = await newUser(t, t.admin);
      const workbook = await insertWorkbook(t, t.admin, deploymentId, 'Doomed workbook');
      const report = await insertReport(t, t.admin, deploymentId);
      const integration = await t.http().post('/api/v1/oauth-integrations').set(bearer(t.admin.token)).send({
        name: 'Doomed integration',
        type: 'snowflake',
        authUrl: 'https://acme.snowflakecomputing.test/oauth/authorize',
        tokenUrl: 'https://acme.snowflakecomputing.test/oauth/token-request',
        clientId: 'client',
        clientSecret: 'secret-value',
        redirectUri: 'https://api.example.test/api/v1/oauth/callback',
      });
      expect(integration.status).toBe(200);
      await t.sql(
        `INSERT INTO user_oauth_tokens (account_id, user_id, integration_id, status) VALUES ($1, $2, $3, 'active')`,
        [t.admin.accountId, t.admin.userId, integration.body.id],
      );
      const oidc = await t
        .http()
        .post('/api/v1/oidc-token-configs')
        .set(bearer(t.admin.token))
        .send({ audienceType: 'aws' });
      expect(oidc.status).toBe(200);
      const folder = await t
        .http()
        .post(`/api/v1/deployments/${deploymentId}/folders`)
        .set(bearer(t.admin.token))
        .send({ name: 'Doomed folder' });
      expect(folder.status).toBe(200);

      for (const path of [
        `/api/v1/users/${user.userId}`,
        `/api/v1/deployments/${deploymentId}/folders/${folder.body.id}`,
        `/api/v1/deployments/${deploymentId}/workbooks/${workbook}`,
        `/api/v1/deployments/${deploymentId}/reports/${report}`,
        `/api/v1/user-oauth-tokens/${integration.body.id}`,
        `/api/v1/oauth-integrations/${integration.body.id}`,
        `/api/v1/oidc-token-configs/${oidc.body.id}`,
      ]) {
        const res = await t.http().delete(path).set(bearer(t.admin.token));
        expect({ path, status: res.status, body: res.body }).toEqual({
          path,
          status: 200,
          body: { success: true },
        });
        expect({ path, again: (await t.http().delete(path).set(bearer(t.admin.token))).status }).toEqual({
          path,
          again: 404,
        });
      }
    });

    it('and for a deployment, the reference’s DeploymentDeleteResponse', async () => {
      const doomed = await newDeployment(t, t.admin, 'Doomed deployment');
      const res = await t.http().delete(`/api/v1/deployments/${doomed}`).set(bearer(t.admin.token));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true });
    });

    it('is what the document says of every DELETE (204 for the others), and creates answer 200 (201 is for SCIM only)', () => {
      for (const op of platformOperations()) {
        const success = Object.keys(responsesOf(op)).filter((s) => s.startsWith('2'));
        if (op.method === 'delete') {
          const expected = DELETES_WITH_BODY.has(where(op)) ? ['200'] : ['204'];
          expect({ op: where(op), success }).toEqual({ op: where(op), success: expected });
        }
        expect({ op: where(op), created: success.includes('201') }).toEqual({
          op: where(op),
          created: false,
        });
      }
    });
  });

  describe('built-in roles take the reference’s names', () => {
    const me = async (actor: Actor) =>
      (await t.http().get('/api/v1/users/me').set(bearer(actor.token))).body as {
        userPolicies: Array<{ actions: string[] }>;
      };

    it('accepts each of them, and grants their actions', async () => {
      for (const role of [
        'Admin',
        'Developer',
        'AIBIDeveloper',
        'D3User',
        'AIBIUser',
        'AIBIViewer',
        'Guest',
        'EmbedUser',
      ]) {
        const user = await newUser(t, t.admin, { defaultRoles: [role] });
        const read = await t.http().get(`/api/v1/users/${user.userId}`).set(bearer(t.admin.token));
        expect({ role, stored: read.body.defaultRoles }).toEqual({ role, stored: [role] });
      }
      const user = await newUser(t, t.admin, { defaultRoles: ['AIBIUser'] });
      expect((await me(user)).userPolicies[0].actions).toEqual(
        expect.arrayContaining(['ReportEdit', 'WorkbookEdit']),
      );
      const forbidden = await t
        .http()
        .post('/api/v1/roles')
        .set(bearer(t.admin.token))
        .send({ name: 'Guest', policies: [] });
      expectErrorShape(forbidden.body, 400, 'role_name_reserved');
    });

    it('still accepts the former names Viewer and Explorer, stored under the new ones', async () => {
      const user = await newUser(t, t.admin, { defaultRoles: ['Viewer', 'Explorer'] });
      const read = await t.http().get(`/api/v1/users/${user.userId}`).set(bearer(t.admin.token));
      expect(read.body.defaultRoles).toEqual(['AIBIViewer', 'AIBIUser']);
      const wrong = await t
        .http()
        .put(`/api/v1/users/${user.userId}`)
        .set(bearer(t.admin.token))
        .send({ defaultRoles: ['Explorers'] });
      expectErrorShape(wrong.body, 400, 'validation_failed');
    });

    it('renames the roles stored under the former names (migration), keeping their actions', async () => {
      const user = await newUser(t, t.admin);
      await t.sql(`UPDATE users SET default_roles = '{Viewer,Explorer}' WHERE id = $1`, [user.userId]);
      const runner = t.dataSource.createQueryRunner();
      try {
        await new BuiltInRoleNames1764200000010().up(runner);
      } finally {
        await runner.release();
      }
      const read = await t.http().get(`/api/v1/users/${user.userId}`).set(bearer(t.admin.token));
      expect(read.body.defaultRoles).toEqual(['AIBIViewer', 'AIBIUser']);
      expect((await me(user)).userPolicies[0].actions).toEqual(
        expect.arrayContaining(['ReportEdit', 'FolderRead']),
      );
    });
  });

  describe('a missing resource answers its kind’s code on every route', () => {
    /**
     * GET and DELETE operations with path parameters and no body (a body is validated first),
     * given ids and names that do not exist.
     */
    const probes = () =>
      platformOperations().filter(
        (op) =>
          ['get', 'delete'].includes(op.method) &&
          op.path.includes('{') &&
          !op.op.requestBody &&
          !op.public &&
          !op.path.includes('/embed/') &&
          // GitHub discovery reads GitHub, not our rows (test/e2e/github.e2e-part.ts covers its 404s).
          !op.path.startsWith('/api/v1/github/'),
      );
    // The deployment itself, when it is the addressed resource, is missing too.
    const missingPath = (op: Operation, deployment: string) =>
      op.path
        .replace('{deploymentId}', /\{deploymentId\}\/.*\{/.test(op.path) ? deployment : MISSING_ID)
        .replace('{embedTenantName}', 'missing-tenant')
        .replace(/\{[^}]+\}/g, MISSING_ID);
    const documented404 = (op: Operation) =>
      Object.keys(responsesOf(op)['404']?.content?.['application/json']?.examples ?? {});

    it('under a deployment that is not the caller’s: deployment_not_found, whatever else is missing', async () => {
      const nested = probes().filter((op) => op.path.startsWith('/api/v1/deployments/{deploymentId}'));
      expect(nested.length).toBeGreaterThan(10);
      for (const op of nested) {
        for (const deployment of [String(theirDeploymentId), MISSING_ID]) {
          const res = await t.http()[op.method](missingPath(op, deployment)).set(bearer(t.admin.token));
          expect({ op: where(op), deployment, status: res.status, code: res.body.code }).toEqual({
            op: where(op),
            deployment,
            status: 404,
            code: 'deployment_not_found',
          });
        }
      }
    });

    it('elsewhere: a <kind>_not_found code the operation documents, never the bare not_found', async () => {
      // Deleting an embed tenant is idempotent: an unknown one answers 204.
      const idempotent = new Set([
        'delete /api/v1/embed-tenants/{embedTenantName}',
        // Name their branch in a required query parameter (names hold slashes); probed in
        // data-model.e2e and merge-gate.e2e.
        'delete /build/api/v1/deployments/{deploymentId}/branches',
        'get /build/api/v1/deployments/{deploymentId}/branches/reviews',
      ]);
      const probed = probes().filter((op) => !idempotent.has(where(op)));
      expect(probed.length).toBeGreaterThan(30);
      for (const op of probed) {
        const res = await t
          .http()
          [op.method](missingPath(op, String(deploymentId)))
          .set(bearer(t.admin.token));
        const code = res.body.code as string;
        expect({ op: where(op), status: res.status, kind: /^[a-z_]+_not_found$/.test(code) }).toEqual({
          op: where(op),
          status: 404,
          kind: true,
        });
        expect({ op: where(op), code, documented: documented404(op).includes(code) }).toEqual({
          op: where(op),
          code,
          documented: true,
        });
      }
    });

    it('unknown routes keep not_found', async () => {
      const res = await t.http().get('/api/v1/no-such-route').set(bearer(t.admin.token));
      expectErrorShape(res.body, 404, 'not_found');
    });
  });

  describe('the OpenAPI document shows each error with its own status and code', () => {
    it('gives every error response examples whose status and code agree with the catalogue', () => {
      let examples = 0;
      for (const op of platformOperations()) {
        for (const [status, response] of Object.entries(responsesOf(op))) {
          if (Number(status) < 400) continue;
          const media = response.content?.['application/json'];
          expect({ op: where(op), status, ref: media?.schema?.$ref }).toEqual({
            op: where(op),
            status,
            ref: '#/components/schemas/ErrorResponseDto',
          });
          const entries = Object.entries(media?.examples ?? {});
          expect({ op: where(op), status, examples: entries.length > 0 }).toEqual({
            op: where(op),
            status,
            examples: true,
          });
          for (const [name, { value }] of entries) {
            examples += 1;
            expect({ op: where(op), status, name, value }).toEqual({
              op: where(op),
              status,
              name,
              value: {
                statusCode: Number(status),
                error: STATUS_CODES[Number(status)],
                message: expect.anything(),
                code: name,
              },
            });
            expect({ code: name, status: isErrorCode(name) && ERROR_CODES[name].status }).toEqual({
              code: name,
              status: Number(status),
            });
            expect(response.description).toContain(`\`${name}\``);
          }
        }
      }
      expect(examples).toBeGreaterThan(300);
    });

    it('documents 401 on every operation that takes a token and 403 on every one that requires an action', () => {
      for (const op of platformOperations()) {
        const codes = (status: string) =>
          Object.keys(responsesOf(op)[status]?.content?.['application/json']?.examples ?? {});
        if (!op.public)
          expect({ op: where(op), codes: codes('401') }).toEqual({
            op: where(op),
            codes: expect.arrayContaining(['unauthorized']),
          });
        if (op.op['x-required-actions'])
          expect({ op: where(op), codes: codes('403') }).toEqual({
            op: where(op),
            codes: expect.arrayContaining(['forbidden']),
          });
      }
      // Routes guarded by their controller's rule list its actions too.
      const roles = platformOperations().find((op) => where(op) === 'get /api/v1/roles')!;
      expect(roles.op['x-required-actions']).toEqual(['All']);
    });
  });
});
