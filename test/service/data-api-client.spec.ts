import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig, ConfigError } from '../../src/core/config/app-config.js';
import { DataApiClient, type DataApiTarget } from '../../src/modules/data-api-client/data-api.client.js';
import { DeploymentsService } from '../../src/modules/deployments/deployments.service.js';
import { DataApiAddresses } from '../../src/modules/data-api-client/data-api-addresses.service.js';
import { DataApiKeys } from '../../src/modules/data-api-client/data-api-keys.service.js';
import { EnvVarsService } from '../../src/modules/deployments/env-vars.service.js';
import { startDataApiFake, type DataApiFake } from '../support/data-api-fake.js';
import { expectApiError, startServiceApp, type ServiceApp } from '../support/service.js';

/** A port nothing listens on: one the system just handed out and took back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('the data API client', () => {
  const secret = `cube-${randomBytes(24).toString('hex')}`;
  const ctx = { userId: 42, tenant: 'acme', groups: ['sales'] };
  const maxBytes = 64 * 1024;
  let fake: DataApiFake;
  let s: ServiceApp;
  let client: DataApiClient;
  let target: DataApiTarget;
  let unconfigured: DataApiTarget;
  let wrongSecret: DataApiTarget;

  beforeAll(async () => {
    fake = await startDataApiFake({ secret, sqlChunkRows: 2 });
    s = await startServiceApp({
      ...fake.env(),
      DATA_API_TIMEOUT_MS: '5000',
      DATA_API_WAIT_MS: '10000',
      DATA_API_MAX_BYTES: String(maxBytes),
    });
    client = s.app.get(DataApiClient);
    const admin = await s.make.principal(s.admin);
    const envVars = s.app.get(EnvVarsService);
    const [configured, bare, wrong] = await Promise.all([
      s.make.deployment(),
      s.make.deployment(),
      s.make.deployment(),
    ]);
    await envVars.set(admin, configured.id, [
      { name: 'CUBEJS_API_SECRET', value: secret },
      { name: 'CUBEJS_DB_TYPE', value: 'postgres' },
    ]);
    await envVars.set(admin, bare.id, [{ name: 'CUBEJS_DB_TYPE', value: 'postgres' }]);
    await envVars.set(admin, wrong.id, [{ name: 'CUBEJS_API_SECRET', value: `not-${secret}` }]);
    target = { accountId: s.admin.accountId, deploymentId: configured.id };
    unconfigured = { accountId: s.admin.accountId, deploymentId: bare.id };
    wrongSecret = { accountId: s.admin.accountId, deploymentId: wrong.id };
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    await s?.close();
    await fake?.close();
  });

  /** The call fails with `code`, and its message repeats neither the secret nor a token. */
  async function expectDataApiError(work: Promise<unknown>, status: number, code: string): Promise<string> {
    const err = await expectApiError(work, status, code);
    const message = JSON.stringify(err.messages);
    expect(message).not.toContain(secret);
    for (const r of fake.requests) if (r.authorization) expect(message).not.toContain(r.authorization);
    return message;
  }

  /** The requests the fake recorded during `work`. */
  async function recorded<T>(work: () => Promise<T>): Promise<T> {
    fake.requests.length = 0;
    return work();
  }

  it('signs a token with the deployment secret that carries the security context', async () => {
    fake.onLoad(() => [
      { 'Orders.status': 'shipped', 'Orders.count': '3' },
      { 'Orders.status': 'open', 'Orders.count': '1' },
    ]);
    const query = { measures: ['Orders.count'], dimensions: ['Orders.status'] };
    const result = await recorded(() => client.load(target, query, ctx));
    expect(result.data).toEqual([
      { 'Orders.status': 'shipped', 'Orders.count': '3' },
      { 'Orders.status': 'open', 'Orders.count': '1' },
    ]);
    expect(result.annotation).toMatchObject({ measures: { 'Orders.count': { type: 'number' } } });
    expect(fake.requests).toHaveLength(1);
    const [request] = fake.requests;
    expect(request).toMatchObject({
      method: 'POST',
      path: '/cubejs-api/v1/load',
      deploymentId: target.deploymentId,
      auth: 'ok',
      securityContext: ctx,
      query,
    });
    expect(request.authorization).not.toMatch(/^bearer/i);
    const { iat, exp } = request.claims as { iat: number; exp: number };
    expect(exp).toBeGreaterThan(iat);
  });

  it('reads a SQL answer streamed as newline-delimited JSON', async () => {
    fake.onSql((sql, c) => {
      expect(sql).toBe('SELECT status, MEASURE(count) FROM Orders GROUP BY 1');
      expect(c).toEqual(ctx);
      return {
        columns: ['status', 'count'],
        rows: ['a', 'b', 'c', 'd', 'e'].map((status, i) => ({ status, count: i })),
      };
    });
    const result = await recorded(() =>
      client.sql(target, 'SELECT status, MEASURE(count) FROM Orders GROUP BY 1', ctx),
    );
    expect(result.columns).toEqual(['status', 'count']);
    expect(result.columnTypes).toEqual(['Utf8', 'Int64']);
    expect(result.rows).toEqual(['a', 'b', 'c', 'd', 'e'].map((status, i) => ({ status, count: i })));
    expect(fake.requests.map((r) => [r.method, r.path, r.query])).toEqual([
      ['POST', '/cubejs-api/v1/cubesql', 'SELECT status, MEASURE(count) FROM Orders GROUP BY 1'],
    ]);
  });

  it('reads the model metadata', async () => {
    fake.onMeta((c) => ({ cubes: [{ name: 'Orders', tenant: c.tenant, measures: [], dimensions: [] }] }));
    await expect(client.meta(target, ctx)).resolves.toEqual({
      cubes: [{ name: 'Orders', tenant: 'acme', measures: [], dimensions: [] }],
    });
  });

  it('repeats a query answered `Continue wait` until data arrives', async () => {
    fake.onLoad(() => [{ 'Orders.count': '7' }]);
    fake.continueWait(3);
    const result = await recorded(() => client.load(target, { measures: ['Orders.count'] }, ctx));
    expect(result.data).toEqual([{ 'Orders.count': '7' }]);
    expect(fake.requests).toHaveLength(4);
    expect(fake.requests.every((r) => r.auth === 'ok' && r.path === '/cubejs-api/v1/load')).toBe(true);
  });

  it('repeats a SQL query answered `Continue wait` too', async () => {
    fake.onSql(() => ({ columns: ['n'], rows: [{ n: 1 }] }));
    fake.continueWait(1);
    await expect(client.sql(target, 'SELECT 1 AS n', ctx)).resolves.toMatchObject({ rows: [{ n: 1 }] });
  });

  it('gives up with data_api_timeout when the data API is still computing past the wait bound', async () => {
    fake.continueWait(Infinity);
    const message = await recorded(() =>
      expectDataApiError(
        client.load(target, { measures: ['Orders.count'] }, ctx, { waitMs: 250 }),
        504,
        'data_api_timeout',
      ),
    );
    expect(message).toContain('250 ms');
    expect(fake.requests.length).toBeGreaterThanOrEqual(2);
  });

  it('stops waiting when the caller aborts, with the caller’s reason', async () => {
    fake.continueWait(Infinity);
    const controller = new AbortController();
    const reason = new Error('run cancelled');
    fake.requests.length = 0;
    const call = client.load(target, { measures: ['Orders.count'] }, ctx, { signal: controller.signal });
    const aborted = expect(call).rejects.toBe(reason);
    for (let i = 0; i < 500 && fake.requests.length === 0; i += 1) await sleep(10);
    expect(fake.requests.length).toBeGreaterThan(0);
    controller.abort(reason);
    await aborted;
  });

  it('answers data_api_query_invalid with the reason of a query the data API refuses', async () => {
    fake.onLoad(() => {
      throw new Error("Cube 'Nope' not found for path 'Nope.count'");
    });
    const message = await expectDataApiError(
      client.load(target, { measures: ['Nope.count'] }, ctx),
      400,
      'data_api_query_invalid',
    );
    expect(message).toContain("Cube 'Nope' not found for path 'Nope.count'");
  });

  it('answers data_api_query_invalid for an error line of a SQL answer', async () => {
    fake.onSql(() => {
      throw new Error('Error during planning: table "nope" not found');
    });
    const message = await expectDataApiError(
      client.sql(target, 'SELECT * FROM nope', ctx),
      400,
      'data_api_query_invalid',
    );
    expect(message).toContain('table \\"nope\\" not found');
  });

  it('cuts a long message of the data API short', async () => {
    fake.failWith(400, 'x'.repeat(5000));
    const message = await expectDataApiError(client.load(target, {}, ctx), 400, 'data_api_query_invalid');
    expect(message.length).toBeLessThan(800);
  });

  it('never repeats the secret or the token, even when the data API echoes them', async () => {
    fake.onLoad((_q, _c, request) => {
      throw new Error(`bad token ${request.authorization} signed with ${secret}`);
    });
    const message = await expectDataApiError(client.load(target, {}, ctx), 400, 'data_api_query_invalid');
    expect(message).toContain('bad token [redacted] signed with [redacted]');
  });

  it('answers data_api_failed when the data API fails', async () => {
    fake.failWith(500, 'Error: connection to the warehouse lost');
    const message = await expectDataApiError(client.load(target, {}, ctx), 502, 'data_api_failed');
    expect(message).toContain('500');
    expect(message).toContain('connection to the warehouse lost');
  });

  it('answers data_api_unavailable when the data API is overloaded or down behind its proxy', async () => {
    fake.failWith(503, 'Service Unavailable');
    await expectDataApiError(client.load(target, {}, ctx), 503, 'data_api_unavailable');
  });

  it('answers data_api_failed for an answer that is not the data API’s', async () => {
    fake.failWith(200, undefined, { body: '<html>hello</html>' });
    await expectDataApiError(client.load(target, {}, ctx), 502, 'data_api_failed');
    fake.failWith(200, undefined, { body: JSON.stringify({ rows: [] }) });
    await expectDataApiError(client.load(target, {}, ctx), 502, 'data_api_failed');
    fake.failWith(200, undefined, { body: JSON.stringify({ data: [] }) });
    await expectDataApiError(client.sql(target, 'SELECT 1', ctx), 502, 'data_api_failed');
  });

  it('answers data_api_failed when the data API refuses the token (another secret)', async () => {
    const message = await recorded(() =>
      expectDataApiError(client.load(wrongSecret, {}, ctx), 502, 'data_api_failed'),
    );
    expect(message).toContain('CUBEJS_API_SECRET');
    expect(fake.requests.map((r) => r.auth)).toEqual(['invalid']);
  });

  it('refuses an answer larger than DATA_API_MAX_BYTES', async () => {
    fake.onLoad(() =>
      Array.from({ length: 2000 }, (_, i) => ({ 'Orders.id': i, 'Orders.note': 'x'.repeat(40) })),
    );
    const message = await expectDataApiError(client.load(target, {}, ctx), 502, 'data_api_failed');
    expect(message).toContain('DATA_API_MAX_BYTES');
  });

  it('stops reading a streamed answer once it passes DATA_API_MAX_BYTES', async () => {
    // The SQL answer is chunked: no Content-Length announces its size.
    fake.onSql(() => ({
      columns: ['id', 'note'],
      rows: Array.from({ length: 2000 }, (_, id) => ({ id, note: 'x'.repeat(40) })),
    }));
    const message = await expectDataApiError(client.sql(target, 'SELECT 1', ctx), 502, 'data_api_failed');
    expect(message).toContain('DATA_API_MAX_BYTES');
  });

  it('fills {accountId} and {deploymentId} in DATA_API_URL_TEMPLATE', async () => {
    const config = s.app.get(AppConfig);
    const other = new DataApiClient(
      {
        ...config,
        dataApi: { ...config.dataApi, urlTemplate: `${fake.url}/deployments/{accountId}` },
      } as AppConfig,
      s.app.get(DeploymentsService),
      s.app.get(DataApiKeys),
      s.app.get(DataApiAddresses),
    );
    await recorded(() => other.meta(target, ctx));
    expect(fake.requests.map((r) => [r.deploymentId, r.path])).toEqual([
      [target.accountId, '/cubejs-api/v1/meta'],
    ]);
  });

  it('answers data_api_unavailable when the data API is slower than DATA_API_TIMEOUT_MS', async () => {
    fake.onLoad(() => [{ 'Orders.count': '1' }]);
    fake.delay(30_000);
    const message = await expectDataApiError(
      client.load(target, {}, ctx, { timeoutMs: 200 }),
      503,
      'data_api_unavailable',
    );
    expect(message).toContain('200 ms');
    fake.reset();
    fake.hang();
    await expectDataApiError(client.meta(target, ctx, { timeoutMs: 200 }), 503, 'data_api_unavailable');
  });

  it('answers data_api_unavailable when the data API cannot be reached', async () => {
    const config = s.app.get(AppConfig);
    const refused = new DataApiClient(
      {
        ...config,
        dataApi: { ...config.dataApi, urlTemplate: `http://127.0.0.1:${await closedPort()}` },
      } as AppConfig,
      s.app.get(DeploymentsService),
      s.app.get(DataApiKeys),
      s.app.get(DataApiAddresses),
    );
    const message = await expectDataApiError(refused.load(target, {}, ctx), 503, 'data_api_unavailable');
    expect(message).toContain('ECONNREFUSED');
    expect(message).toContain('check DATA_API_URL_TEMPLATE');
  });

  /** A client of this app's deployments and secrets, on other data API settings. */
  const clientWith = (dataApi: Partial<AppConfig['dataApi']>) => {
    const config = s.app.get(AppConfig);
    return new DataApiClient(
      { ...config, dataApi: { ...config.dataApi, ...dataApi } } as AppConfig,
      s.app.get(DeploymentsService),
      s.app.get(DataApiKeys),
      s.app.get(DataApiAddresses),
    );
  };

  it('tells a configured address that does not resolve from a data API that is not configured', async () => {
    // Configured, but its host name resolves nowhere (.invalid, RFC 6761): still 503, with the
    // cause and the setting the address comes from.
    const unresolved = clientWith({ urlTemplate: 'http://cube-{deploymentId}.invalid:4000' });
    const message = await expectDataApiError(unresolved.load(target, {}, ctx), 503, 'data_api_unavailable');
    expect(message).toMatch(/ENOTFOUND: its host name does not resolve|EAI_AGAIN/);
    expect(message).toContain('check DATA_API_URL_TEMPLATE');

    // Neither DATA_API_URL_TEMPLATE nor DEPLOYMENT_DOMAIN: nothing to try, so no "retry shortly".
    const none = clientWith({ urlTemplate: null, deploymentUrls: false });
    const notConfigured = await recorded(() =>
      expectDataApiError(none.sql(target, 'SELECT 1', ctx), 409, 'data_api_not_configured'),
    );
    expect(notConfigured).toContain('No data API is configured on this installation');
    expect(notConfigured).toContain('DATA_API_URL_TEMPLATE');
    expect(notConfigured).toContain('DEPLOYMENT_DOMAIN');
    expect(notConfigured).not.toContain('retry');
    expect(fake.requests).toEqual([]);
    // A deployment outside the account is still 404 first.
    await expectApiError(none.meta({ ...target, deploymentId: 999_999 }, ctx), 404, 'deployment_not_found');
  });

  it('answers data_api_not_configured for a deployment without CUBEJS_API_SECRET, asking nothing', async () => {
    const message = await recorded(() =>
      expectDataApiError(client.load(unconfigured, {}, ctx), 409, 'data_api_not_configured'),
    );
    expect(message).toContain('CUBEJS_API_SECRET');
    expect(fake.requests).toEqual([]);
  });

  it('answers deployment_not_found for a deployment of another account', async () => {
    await expectApiError(
      client.load({ accountId: target.accountId + 1000, deploymentId: target.deploymentId }, {}, ctx),
      404,
      'deployment_not_found',
    );
    await expectApiError(client.meta({ ...target, deploymentId: 999_999 }, ctx), 404, 'deployment_not_found');
  });
});

describe('DATA_API_URL_TEMPLATE', () => {
  const config = (template: string) =>
    new AppConfig('cli', { NODE_ENV: 'test', DATA_API_URL_TEMPLATE: template });

  it('takes an http(s) address with {deploymentId} and {accountId} placeholders', () => {
    expect(config('https://{deploymentId}.data.example.com/').dataApi.urlTemplate).toBe(
      'https://{deploymentId}.data.example.com',
    );
    expect(config('http://cube.internal:4000/a/{accountId}/d/{deploymentId}').dataApi.urlTemplate).toBe(
      'http://cube.internal:4000/a/{accountId}/d/{deploymentId}',
    );
    expect(new AppConfig('cli', { NODE_ENV: 'test' }).dataApi).toEqual({
      urlTemplate: null,
      deploymentUrls: false,
      timeoutMs: 30_000,
      waitMs: 60_000,
      maxBytes: 32 * 1024 * 1024,
    });
  });

  it('counts deployments’ own addresses as their data APIs only when DEPLOYMENT_DOMAIN is set', () => {
    const at = (env: Record<string, string>) => new AppConfig('cli', { NODE_ENV: 'test', ...env }).dataApi;
    expect(at({}).deploymentUrls).toBe(false);
    expect(at({ DEPLOYMENT_DOMAIN: 'cube.example.com' }).deploymentUrls).toBe(true);
  });

  it('refuses anything else at start-up', () => {
    for (const bad of [
      'ftp://{deploymentId}.example.com',
      'https://{deployment}.example.com',
      'https://user:pass@{deploymentId}.example.com',
      'https://{deploymentId}.example.com/?x=1',
      'not a url',
    ]) {
      expect(() => config(bad)).toThrow(ConfigError);
    }
  });
});
