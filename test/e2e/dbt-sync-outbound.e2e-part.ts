import net from 'node:net';
import { OUTBOUND_REFUSED } from '../../src/core/net/outbound-address.js';
import { bearer, expectErrorShape, startApp, type TestApp } from '../support/app.js';
import { deploymentInput } from '../support/factories.js';
import { remote, REMOTE_HOST } from '../support/tcp-remote.js';

/** The address the test's remotes listen on: loopback, opened by this app's OUTBOUND_ALLOWED_HOSTS alone. */

/**
 * Issue 26, item 2: a tenant cannot aim a dbt repository at the platform's own network. (What a
 * sync's fetch says of an address it cannot read, and item 1's hung fetch ended within
 * DBT_GIT_TIMEOUT_MS, are rules of the sync job: test/service/dbt-sync.service.spec.ts.)
 */
describe('dbt repositories and the platform’s own network', () => {
  let t: TestApp;
  let hung: Awaited<ReturnType<typeof remote>>;
  let notTls: Awaited<ReturnType<typeof remote>>;
  let closedPort: number;
  /** The deployment whose dbt integration the tests set (no sync runs here). */
  let dep: number;
  const admin = () => bearer(t.admin.token);
  const base = (deployment: number) => `/api/v1/deployments/${deployment}`;
  const put = (deployment: number, repositoryUrl: string) =>
    t
      .http()
      .put(`${base(deployment)}/dbt-integration`)
      .set(admin())
      .send({ repositoryUrl, branch: 'main' });
  const url = (port: number) => `https://${REMOTE_HOST}:${port}/acme/dbt.git`;

  beforeAll(async () => {
    // Accepts and never answers.
    hung = await remote(() => undefined);
    // Speaks something that is not TLS, then hangs up: git's TLS handshake fails.
    notTls = await remote((socket) => socket.end('HTTP/1.1 200 OK\r\n\r\nnot tls'));
    const gone = await remote(() => undefined);
    closedPort = gone.port;
    await gone.close();
    t = await startApp({
      DBT_GIT_PROTOCOLS: 'https,ssh,git',
      OUTBOUND_ALLOWED_HOSTS: REMOTE_HOST,
      OUTBOX_RELAY_INTERVAL_MS: '600000',
    });
    const res = await t
      .http()
      .post('/build/api/v1/deployments')
      .set(admin())
      .send(deploymentInput({ name: 'dbt remote' }))
      .expect(200);
    dep = res.body.id as number;
  });
  afterAll(async () => {
    await t?.close();
    await hung?.close();
    await notTls?.close();
  });

  it('saves a repository on an address the operator opened (OUTBOUND_ALLOWED_HOSTS)', async () => {
    for (const [name, port] of [
      ['hung', hung.port],
      ['notTls', notTls.port],
      ['closed', closedPort],
      ['saved', closedPort],
    ] as const) {
      const res = await put(dep, url(port));
      expect({ name, status: res.status, url: res.body.repositoryUrl }).toEqual({
        name,
        status: 200,
        url: url(port),
      });
    }
  });

  it('refuses every address into the platform’s network with 400, in the same words, and keeps the saved URL', async () => {
    const hostile = [
      'https://127.0.0.1/acme/dbt.git',
      `https://127.0.0.1:${hung.port}/acme/dbt.git`,
      'https://[::1]/acme/dbt.git',
      'https://2130706433/acme/dbt.git',
      'https://0x7f.1/acme/dbt.git',
      'https://0177.0.0.1/acme/dbt.git',
      'https://[::ffff:127.0.0.1]/acme/dbt.git',
      'https://[::ffff:a9fe:a9fe]/latest/meta-data',
      'https://169.254.169.254/latest/meta-data',
      'https://metadata.google.internal/computeMetadata/v1/',
      'https://metadata/computeMetadata/v1/',
      'https://10.0.0.1/acme/dbt.git',
      'https://172.16.0.1/acme/dbt.git',
      'https://192.168.1.1/acme/dbt.git',
      'https://100.64.0.1/acme/dbt.git',
      'https://[fd00::1]/acme/dbt.git',
      'https://[fe80::1]/acme/dbt.git',
      'https://0.0.0.0/acme/dbt.git',
      'https://224.0.0.1/acme/dbt.git',
      'https://nowhere.invalid/acme/dbt.git',
      'ssh://127.0.0.1/acme/dbt.git',
      'ssh://2130706433/acme/dbt.git',
      'git://[::1]/acme/dbt.git',
    ];
    for (const repositoryUrl of hostile) {
      const res = await put(dep, repositoryUrl);
      expect({ repositoryUrl, status: res.status, code: res.body.code, message: res.body.message }).toEqual({
        repositoryUrl,
        status: 400,
        code: 'invalid_dbt_repository_url',
        message: `repositoryUrl ${OUTBOUND_REFUSED}`,
      });
      expectErrorShape(res.body, 400, 'invalid_dbt_repository_url');
    }
    // Nothing was asked of the address behind the loopback one the operator did not open.
    expect(hung.connections()).toBe(0);
    const saved = await t
      .http()
      .get(`${base(dep)}/dbt-integration`)
      .set(admin());
    expect(saved.body.repositoryUrl).toBe(url(closedPort));
  });

  it('refuses a name that resolves to loopback (localhost), as the address itself', async () => {
    const res = await put(dep, `https://localhost:${hung.port}/acme/dbt.git`);
    expectErrorShape(res.body, 400, 'invalid_dbt_repository_url');
    expect(res.body.message).toBe(`repositoryUrl ${OUTBOUND_REFUSED}`);
    expect(hung.connections()).toBe(0);
  });

  it('refuses a URL without a host (https:///x)', async () => {
    for (const repositoryUrl of [
      'https:///acme/dbt.git',
      'https:///github.com/acme/dbt.git',
      'ssh:///acme/dbt.git',
    ]) {
      const res = await put(dep, repositoryUrl);
      expect({ repositoryUrl, status: res.status, code: res.body.code, message: res.body.message }).toEqual({
        repositoryUrl,
        status: 400,
        code: 'invalid_dbt_repository_url',
        message: 'repositoryUrl has no host',
      });
    }
  });

  /**
   * The other outbound call an account aims: the token endpoint of its OAuth integrations, which
   * the service POSTs the authorization code and the client secret to, and whose answer it
   * reports. One in the platform's network is never connected to, and reads as a closed port.
   */
  describe('OAuth token endpoints', () => {
    const exchange = async (tokenUrl: string) => {
      const created = await t
        .http()
        .post('/api/v1/oauth-integrations')
        .set(admin())
        .send({
          name: `Provider ${tokenUrl}`,
          type: 'custom',
          authUrl: 'https://idp.example.test/authorize',
          tokenUrl,
          clientId: 'client',
          clientSecret: 'secret',
          redirectUri: 'https://api.example.test/api/v1/oauth/callback',
          scopes: ['read'],
        });
      expect({ tokenUrl, status: created.status }).toEqual({ tokenUrl, status: 200 });
      const initiated = await t
        .http()
        .post(`/api/v1/user-oauth-tokens/${created.body.id}/initiate`)
        .set(admin());
      expect({ tokenUrl, status: initiated.status }).toEqual({ tokenUrl, status: 200 });
      return t.http().get('/api/v1/oauth/callback').query({ code: 'the-code', state: initiated.body.state });
    };

    it('never connects to one in the platform’s network, and says what a closed port says', async () => {
      // Loopback, not opened: it would answer tokens to anyone who asked.
      let asked = 0;
      const internal = await new Promise<net.Server>((resolve) => {
        const server = net.createServer((socket) => {
          asked += 1;
          socket.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"access_token":"internal"}');
        });
        server.listen(0, '127.0.0.1', () => resolve(server));
      });
      try {
        const port = (internal.address() as net.AddressInfo).port;
        const refused = await exchange(`http://127.0.0.1:${port}/token`);
        const mapped = await exchange(`https://[::ffff:127.0.0.1]:${port}/token`);
        const closed = await exchange(`https://${REMOTE_HOST}:${closedPort}/token`);
        for (const res of [refused, mapped, closed]) {
          expectErrorShape(res.body, 502, 'oauth_token_exchange_failed');
        }
        expect(refused.body.message).toBe(closed.body.message);
        expect(mapped.body.message).toBe(closed.body.message);
        expect(closed.body.message).toMatch(/token_endpoint_unreachable/);
        expect(asked).toBe(0);
      } finally {
        await new Promise((resolve) => internal.close(resolve));
      }
    });
  });
});
