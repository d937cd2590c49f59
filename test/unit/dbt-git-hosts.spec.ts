import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { AppConfig, ConfigError } from '../../src/core/config/app-config.js';
import { classifyFetchFailure, fetchManifest, remoteTransport } from '../../src/modules/dbt-sync/dbt-git.js';
import { hostAllowed } from '../../src/modules/dbt-sync/dbt-integrations.service.js';

/**
 * `DBT_GIT_HOSTS`: the hosts a dbt repository URL may name (read at start-up, checked when the
 * URL is saved), and no HTTP redirect followed by git while they are limited, since a redirect
 * could lead to any host.
 */
describe('DBT_GIT_HOSTS', () => {
  const hostsOf = (value: string | undefined) =>
    new AppConfig('worker', { NODE_ENV: 'test', DBT_GIT_HOSTS: value }).dbtSync.gitHosts;

  it('reads host names and *.domain patterns, lower-cased and without a final dot; unset is any host', () => {
    expect(hostsOf(undefined)).toBeNull();
    expect(hostsOf(' GitHub.com, *.gitlab.example.com. ,github.com ')).toEqual([
      'github.com',
      '*.gitlab.example.com',
    ]);
  });

  it('refuses what is not a host name, naming the variable', () => {
    for (const bad of ['*', 'https://github.com', 'git hub.com', 'a..b', '*.', 'x.*.com', ',']) {
      expect(() => hostsOf(bad)).toThrow(ConfigError);
      expect(() => hostsOf(bad)).toThrow(/DBT_GIT_HOSTS/);
    }
  });

  it('matches a host exactly, or any host below a *.domain, and nothing else', () => {
    const patterns = ['github.com', '*.gitlab.example.com'];
    const allowed = [
      'github.com',
      'GitHub.com',
      'github.com.',
      'a.gitlab.example.com',
      'x.y.gitlab.example.com',
    ];
    const refused = [
      'api.github.com',
      'github.com.evil.test',
      'evilgithub.com',
      'gitlab.example.com',
      'gitlab.example.com.evil.test',
      'agitlab.example.com',
      '169.254.169.254',
    ];
    for (const host of allowed) expect({ host, ok: hostAllowed(host, patterns) }).toEqual({ host, ok: true });
    for (const host of refused)
      expect({ host, ok: hostAllowed(host, patterns) }).toEqual({ host, ok: false });
  });

  describe('redirects', () => {
    let target: http.Server;
    let redirector: http.Server;
    let hits = 0;
    const portOf = (server: http.Server | net.Server) => (server.address() as AddressInfo).port;
    const listen = (server: http.Server) =>
      new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));

    beforeAll(async () => {
      // Where a redirect would lead: it only counts the requests that reach it.
      target = http.createServer((_req, res) => {
        hits += 1;
        res.writeHead(404).end();
      });
      await listen(target);
      redirector = http.createServer((req, res) => {
        res.writeHead(302, { Location: `http://127.0.0.1:${portOf(target)}${req.url}` }).end();
      });
      await listen(redirector);
    });
    afterAll(async () => {
      await new Promise((resolve) => target.close(resolve));
      await new Promise((resolve) => redirector.close(resolve));
    });

    it('are never followed (a redirect could lead to a host not checked): the other host is never asked', async () => {
      hits = 0;
      const read = fetchManifest(
        {
          url: `http://127.0.0.1:${portOf(redirector)}/acme/dbt.git`,
          ref: 'main',
          projectRoot: '/',
          auth: null,
          pin: { host: '127.0.0.1', port: portOf(redirector), address: '127.0.0.1', family: 4 },
        },
        { protocols: ['http'], timeoutMs: 30_000, maxBytes: 1024 * 1024 },
      );
      await expect(read).rejects.toMatchObject({
        message: expect.stringMatching(/answers with a redirect, which is not followed/),
        permanent: true,
      });
      expect(hits).toBe(0);
    });
  });
});

/**
 * git connects to the address the outbound rule checked (`pin`), never to what the URL's name
 * resolves to when git runs: these URLs name a host that does not resolve at all, and the
 * connection still reaches the pinned address.
 */
describe('the pinned address of a dbt repository', () => {
  let server: net.Server;
  let connections = 0;

  beforeAll(async () => {
    // Counts connections and hangs up on each at once, so git fails fast.
    server = net.createServer((socket) => {
      connections += 1;
      socket.on('error', () => undefined);
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.2', () => resolve()));
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  // ssh:// is pinned by ssh's own HostName (below): the ssh client is not on every machine.
  it.each(['https', 'http', 'git'])('%s:// connects to the pinned address', async (scheme) => {
    connections = 0;
    const port = (server.address() as AddressInfo).port;
    const read = fetchManifest(
      {
        url: `${scheme}://git.pinned.invalid:${port}/acme/dbt.git`,
        ref: 'main',
        projectRoot: '/',
        auth: null,
        pin: { host: 'git.pinned.invalid', port, address: '127.0.0.2', family: 4 },
      },
      { protocols: [scheme], timeoutMs: 20_000, maxBytes: 1024 * 1024 },
    );
    await expect(read).rejects.toMatchObject({
      message:
        'Could not fetch the dbt repository: the connection failed, was refused or did not finish within 20 s',
      permanent: false,
    });
    expect(connections).toBeGreaterThan(0);
  });
});

describe('how git is held to the pinned address', () => {
  const source = (url: string, host: string, address: string, family: 4 | 6 = 4) => ({
    url,
    ref: 'main',
    projectRoot: '/',
    auth: null,
    pin: { host, port: 443, address, family },
  });
  const config = (env: Record<string, string>) =>
    Object.fromEntries(
      Array.from({ length: Number(env.GIT_CONFIG_COUNT) }, (_, i) => [
        env[`GIT_CONFIG_KEY_${i}`],
        env[`GIT_CONFIG_VALUE_${i}`],
      ]),
    );

  it('https: the URL as WHATWG writes it, its host and port resolved to the address, no redirect', () => {
    const t = remoteTransport(
      source('https://Git.Example.com/acme/dbt.git', 'git.example.com', '140.82.121.3'),
      60_000,
    );
    expect(t.url).toBe('https://git.example.com/acme/dbt.git');
    expect(config(t.env)).toEqual({
      'http.curloptResolve': 'git.example.com:443:140.82.121.3',
      'http.followRedirects': 'false',
      'http.lowSpeedLimit': '1000',
      'http.lowSpeedTime': '30',
    });
    const v6 = remoteTransport(
      source('https://git.example.com/x', 'git.example.com', '2606:50c0::1', 6),
      4_000,
    );
    expect(config(v6.env)['http.curloptResolve']).toBe('git.example.com:443:[2606:50c0::1]');
    expect(config(v6.env)['http.lowSpeedTime']).toBe('2');
  });

  it('ssh: ssh connects to the address, the URL host kept as the known-host key', () => {
    const t = remoteTransport(
      {
        ...source('ssh://git.example.com/acme/dbt.git', 'git.example.com', '140.82.121.3'),
        pin: { host: 'git.example.com', port: 22, address: '140.82.121.3', family: 4 },
      },
      60_000,
    );
    expect(t.url).toBe('ssh://git.example.com/acme/dbt.git');
    expect(t.env.GIT_SSH_COMMAND).toBe(
      'ssh -o BatchMode=yes -o StrictHostKeyChecking=accept-new -o HostName=140.82.121.3 ' +
        '-o HostKeyAlias=git.example.com -o ConnectTimeout=30',
    );
  });

  it('git: the address in place of the host', () => {
    const t = remoteTransport(
      {
        ...source('git://git.example.com/acme/dbt.git', 'git.example.com', '2606:50c0::1', 6),
        pin: { host: 'git.example.com', port: 9418, address: '2606:50c0::1', family: 6 },
      },
      60_000,
    );
    expect(t.url).toBe('git://[2606:50c0::1]:9418/acme/dbt.git');
  });
});

describe('what a failed read says', () => {
  it.each([
    [
      "fatal: unable to access 'https://h/x.git/': Failed to connect to h port 1 after 0 ms: Couldn't connect to server",
      'unreachable',
    ],
    [
      "fatal: unable to access 'https://h/x.git/': gnutls_handshake() failed: An unexpected TLS packet was received.",
      'unreachable',
    ],
    [
      "fatal: unable to access 'https://h/x.git/': OpenSSL SSL_connect: SSL_ERROR_SYSCALL in connection to h:443",
      'unreachable',
    ],
    [
      "fatal: unable to access 'https://h/x.git/': Operation too slow. Less than 1000 bytes/sec transferred the last 30 seconds",
      'unreachable',
    ],
    ["fatal: unable to access 'http://h/x.git/': The requested URL returned error: 500", 'unreachable'],
    ["fatal: unable to access 'https://h/x.git/': Could not resolve host: h", 'unreachable'],
    [
      'ssh: connect to host h port 22: Connection refused\r\nfatal: Could not read from remote repository.',
      'unreachable',
    ],
    [
      'kex_exchange_identification: Connection closed by remote host\r\nfatal: Could not read from remote repository.',
      'unreachable',
    ],
    ['fatal: unable to connect to h:\nh[0: 1.2.3.4]: errno=Connection refused', 'unreachable'],
    ['fatal: protocol error: bad line length character: HTTP', 'unreachable'],
    ["fatal: could not read Username for 'https://h': terminal prompts disabled", 'auth'],
    ["fatal: Authentication failed for 'https://h/x.git/'", 'auth'],
    ["fatal: unable to access 'http://h/x.git/': The requested URL returned error: 403", 'auth'],
    ['git@h: Permission denied (publickey).\r\nfatal: Could not read from remote repository.', 'auth'],
    ["fatal: repository 'http://h/x.git/' not found", 'not-found'],
    ["fatal: unable to access 'http://h/x.git/': The requested URL returned error: 404", 'not-found'],
    ['ERROR: Repository not found.\nfatal: Could not read from remote repository.', 'not-found'],
    ["fatal: unable to access 'http://h/x.git/': The requested URL returned error: 302", 'redirect'],
    ["fatal: transport 'ext' not allowed", 'transport'],
    ['error: cannot run ssh: No such file or directory\nfatal: unable to fork', 'unreachable'],
  ])('%s: %s', (stderr, kind) => {
    expect(classifyFetchFailure(stderr)).toBe(kind);
  });
});
