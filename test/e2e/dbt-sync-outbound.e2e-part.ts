import net from 'node:net';
import { OUTBOUND_REFUSED } from '../../src/core/net/outbound-address.js';
import { bearer, expectErrorShape, newAccount, startApp, type TestApp } from '../support/app.js';
import { deploymentInput, waitFor } from '../support/factories.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are parsed JSON */
type Json = Record<string, any>;

/** The address the test's remotes listen on: loopback, opened by this app's OUTBOUND_ALLOWED_HOSTS alone. */
const REMOTE_HOST = '127.0.0.2';
const TIMEOUT_MS = 2_000;
const UNREACHABLE = `Could not fetch the dbt repository: the connection failed, was refused or did not finish within ${TIMEOUT_MS / 1000} s`;

/** A TCP server on {@link REMOTE_HOST}; `open` holds the connections it has not seen closed. */
async function remote(onConnection: (socket: net.Socket) => void) {
  const open = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    open.add(socket);
    // Read (and drop) what comes, so the other side's close is seen.
    socket.resume();
    socket.on('error', () => undefined);
    socket.on('close', () => open.delete(socket));
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, REMOTE_HOST, () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    open,
    connections: () => connections,
    close: () => {
      for (const socket of open) socket.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Issue 26, item 2: a tenant cannot aim a dbt repository at the platform's own network, and a
 * failed fetch does not tell what listens at an address. Item 1's hung fetch: a repository that
 * accepts connections and never answers ends within DBT_GIT_TIMEOUT_MS, its connection closed.
 */
describe('dbt repositories and the platform’s own network', () => {
  let t: TestApp;
  let hung: Awaited<ReturnType<typeof remote>>;
  let notTls: Awaited<ReturnType<typeof remote>>;
  let closedPort: number;
  const deployments: Record<'hung' | 'notTls' | 'closed' | 'saved', number> = {
    hung: 0,
    notTls: 0,
    closed: 0,
    saved: 0,
  };
  const admin = () => bearer(t.admin.token);
  /** Each deployment's account's admin (the closed-port and TLS ones each have an account). */
  const owners = new Map<number, string>();
  const as = (deployment: number) => bearer(owners.get(deployment) ?? t.admin.token);
  const base = (deployment: number) => `/api/v1/deployments/${deployment}`;
  const put = (deployment: number, repositoryUrl: string) =>
    t
      .http()
      .put(`${base(deployment)}/dbt-integration`)
      .set(as(deployment))
      .send({ repositoryUrl, branch: 'main' });
  const start = (deployment: number) =>
    t
      .http()
      .post(`${base(deployment)}/dbt-sync`)
      .set(as(deployment))
      .send({});
  const logs = async (deployment: number, syncJobId: string) =>
    (
      (
        await t
          .http()
          .get(`${base(deployment)}/dbt-sync/${syncJobId}/logs`)
          .query({ first: 1000 })
          .set(as(deployment))
      ).body as Json
    ).items as Json[];
  /** The error line of the sync's first failed attempt (bounded polling). */
  const firstError = async (deployment: number, syncJobId: string): Promise<Json | undefined> =>
    (
      await waitFor(
        () => logs(deployment, syncJobId),
        (items) => items.some((l) => l.level === 'error'),
        20_000,
        100,
      )
    ).find((l) => l.level === 'error');
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
      RUN_JOBS_IN_PROCESS: 'true',
      WORKER_QUEUES: 'default',
      DBT_GIT_PROTOCOLS: 'https,ssh,git',
      DBT_GIT_TIMEOUT_MS: String(TIMEOUT_MS),
      OUTBOUND_ALLOWED_HOSTS: REMOTE_HOST,
    });
    for (const name of Object.keys(deployments) as (keyof typeof deployments)[]) {
      // The two syncs that run together are of two accounts: the queue's share of one account
      // would otherwise run them one after the other.
      const owner =
        name === 'closed' || name === 'notTls' ? await newAccount(t, name.toLowerCase()) : t.admin;
      const res = await t
        .http()
        .post('/build/api/v1/deployments')
        .set(bearer(owner.token))
        .send(deploymentInput({ name: `dbt ${name}` }))
        .expect(200);
      deployments[name] = res.body.id as number;
      owners.set(deployments[name], owner.token);
    }
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
      const res = await put(deployments[name], url(port));
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
      const res = await put(deployments.saved, repositoryUrl);
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
      .get(`${base(deployments.saved)}/dbt-integration`)
      .set(as(deployments.saved));
    expect(saved.body.repositoryUrl).toBe(url(closedPort));
  });

  it('refuses a name that resolves to loopback (localhost), as the address itself', async () => {
    const res = await put(deployments.saved, `https://localhost:${hung.port}/acme/dbt.git`);
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
      const res = await put(deployments.saved, repositoryUrl);
      expect({ repositoryUrl, status: res.status, code: res.body.code, message: res.body.message }).toEqual({
        repositoryUrl,
        status: 400,
        code: 'invalid_dbt_repository_url',
        message: 'repositoryUrl has no host',
      });
    }
  });

  it('refuses at start a sync whose saved URL is now refused, starting nothing', async () => {
    // A URL saved before the rule (or under a wider allow-list): the sync checks it again.
    await t.sql(`UPDATE dbt_integrations SET repository_url = $1 WHERE deployment_id = $2`, [
      `https://localhost:${hung.port}/acme/dbt.git`,
      deployments.saved,
    ]);
    const res = await start(deployments.saved);
    expectErrorShape(res.body, 400, 'invalid_dbt_repository_url');
    expect(res.body.message).toBe(`repositoryUrl ${OUTBOUND_REFUSED}`);
    const history = await t
      .http()
      .get(`${base(deployments.saved)}/dbt-sync`)
      .set(as(deployments.saved));
    expect(history.body.items).toEqual([]);
    expect(hung.connections()).toBe(0);
  });

  it('ends a fetch from a remote that never answers within DBT_GIT_TIMEOUT_MS, its connection closed, and says so in neutral words', async () => {
    const res = await start(deployments.hung);
    expect(res.status).toBe(200);
    const sync = res.body.syncJobId as string;
    const error = await firstError(deployments.hung, sync);
    expect(error?.message).toBe(`repo-clone failed: ${UNREACHABLE}`);
    expect(hung.connections()).toBeGreaterThan(0);
    // No retry after this one.
    await t
      .http()
      .delete(`${base(deployments.hung)}/dbt-sync/${sync}`)
      .set(as(deployments.hung));
    // git's network helper went with it: nothing holds the connection open.
    expect(
      await waitFor(
        () => Promise.resolve(hung.open.size),
        (n) => n === 0,
        10_000,
        50,
      ),
    ).toBe(0);
    const item = (
      (
        await t
          .http()
          .get(`${base(deployments.hung)}/dbt-sync`)
          .set(as(deployments.hung))
      ).body.items as Json[]
    ).find((r) => r.syncJobId === sync)!;
    const clone = (item.phases as Json[]).find((p) => p.phase === 'repo-clone')!;
    expect(clone.outcome).toBe('failed');
    // The bound, and not git's, curl's or the job's own longer timeouts, ended it.
    expect(clone.durationMs).toBeLessThan(TIMEOUT_MS + 5_000);
  });

  it('says the same of a closed port and of a TLS failure, never git’s own words', async () => {
    const started = await Promise.all([start(deployments.closed), start(deployments.notTls)]);
    const errors = await Promise.all(
      started.map((res, i) => {
        expect(res.status).toBe(200);
        return firstError([deployments.closed, deployments.notTls][i], res.body.syncJobId as string);
      }),
    );
    await Promise.all(
      started.map((res, i) =>
        t
          .http()
          .delete(`${base([deployments.closed, deployments.notTls][i])}/dbt-sync/${res.body.syncJobId}`)
          .set(as([deployments.closed, deployments.notTls][i])),
      ),
    );
    expect(notTls.connections()).toBeGreaterThan(0);
    expect(errors.map((e) => e?.message)).toEqual([
      `repo-clone failed: ${UNREACHABLE}`,
      `repo-clone failed: ${UNREACHABLE}`,
    ]);
    for (const [i, res] of started.entries()) {
      const all = JSON.stringify(await logs([deployments.closed, deployments.notTls][i], res.body.syncJobId));
      expect(all).not.toMatch(/gnutls|handshake|TLS|Couldn't connect|Failed to connect|errno|fatal:/i);
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
