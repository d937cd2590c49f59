import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppConfig, ConfigError } from '../../src/core/config/app-config.js';
import { DbtSourceError, fetchManifest } from '../../src/modules/dbt-sync/dbt-git.js';
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
    const portOf = (server: http.Server) => (server.address() as AddressInfo).port;
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

    const read = (followRedirects: boolean) =>
      fetchManifest(
        {
          url: `http://127.0.0.1:${portOf(redirector)}/acme/dbt.git`,
          ref: 'main',
          projectRoot: '/',
          auth: null,
        },
        { protocols: ['http'], followRedirects, timeoutMs: 30_000, maxBytes: 1024 * 1024 },
      );

    it('are not followed while the hosts are limited: the other host is never asked', async () => {
      hits = 0;
      await expect(read(false)).rejects.toBeInstanceOf(DbtSourceError);
      expect(hits).toBe(0);
    });

    it('are followed as git does by default otherwise (the same redirect reaches the other host)', async () => {
      hits = 0;
      await expect(read(true)).rejects.toBeInstanceOf(DbtSourceError);
      expect(hits).toBeGreaterThan(0);
    });
  });
});
