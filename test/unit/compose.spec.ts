import fs from 'node:fs';
import { parse } from 'yaml';

/**
 * The example deployment hands out no secret: `docker/compose.yaml` (parsed, merge keys applied;
 * no Docker engine is needed) requires every secret from its environment, with `${NAME:?...}`
 * (compose refuses to start without it), and passes it to every process that needs it.
 */
describe('docker/compose.yaml', () => {
  const text = fs.readFileSync('docker/compose.yaml', 'utf8');
  const compose = parse(text, { merge: true }) as {
    services: Record<
      string,
      { image?: string; command?: string[]; environment?: Record<string, string>; security_opt?: string[] }
    >;
  };
  const { services } = compose;
  const required = (name: string) => new RegExp(`^\\$\\{${name}:\\?[^}]+\\}$`);
  /** The processes of our image: the API, the worker, and whatever else the file runs from it. */
  const ours = Object.entries(services).filter(([, s]) => s.image === 'analytics-platform-api:local');

  it('runs the API and the worker from our image', () => {
    expect(ours.map(([name]) => name).sort()).toEqual(['api', 'worker']);
  });

  it('requires the database password and gives it to PostgreSQL and to every process', () => {
    expect(services.postgres.environment?.POSTGRES_PASSWORD).toMatch(required('POSTGRES_PASSWORD'));
    for (const [name, service] of ours) {
      const url = /^postgres:\/\/platform:(.+)@postgres:5432\/platform$/.exec(
        service.environment?.DATABASE_URL ?? '',
      );
      expect({ name, password: url?.[1] }).toEqual({
        name,
        password: expect.stringMatching(required('POSTGRES_PASSWORD')),
      });
    }
  });

  it('starts Redis with a required password and gives it to its health check and every process', () => {
    const command = services.redis.command ?? [];
    expect(command.slice(0, 2)).toEqual(['redis-server', '--requirepass']);
    expect(command[2]).toMatch(required('REDIS_PASSWORD'));
    expect(services.redis.environment?.REDISCLI_AUTH).toMatch(required('REDIS_PASSWORD'));
    for (const [name, service] of ours) {
      const url = /^redis:\/\/:(.+)@redis:6379$/.exec(service.environment?.REDIS_URL ?? '');
      expect({ name, password: url?.[1] }).toEqual({
        name,
        password: expect.stringMatching(required('REDIS_PASSWORD')),
      });
    }
  });

  it('lets every process of our image run the sandbox (user namespaces): compiles run in both', () => {
    for (const [name, service] of ours)
      expect({ name, security: service.security_opt }).toEqual({
        name,
        security: ['seccomp=unconfined', 'apparmor=unconfined'],
      });
  });

  it('requires SECRETS_KEY of every process', () => {
    for (const [name, service] of ours)
      expect({ name, key: service.environment?.SECRETS_KEY }).toEqual({
        name,
        key: expect.stringMatching(required('SECRETS_KEY')),
      });
  });

  it('holds no literal password and no default for a secret', () => {
    const yaml = text
      .split('\n')
      .filter((line) => !/^\s*#/.test(line))
      .join('\n');
    expect(yaml).not.toMatch(/\$\{(POSTGRES_PASSWORD|REDIS_PASSWORD|SECRETS_KEY):?-/);
    // Every credential in a URL, and every password setting, is a required variable.
    const secret = /^"?\$\{\w+:\?[^}]+\}"?$/;
    const urls = [...yaml.matchAll(/\w+:\/\/[^/\s:@]*:([^@\n]+)@/g)];
    expect(urls).toHaveLength(2);
    for (const [, password] of urls) expect(password).toMatch(secret);
    const settings = [...yaml.matchAll(/(?:PASSWORD|REDISCLI_AUTH|SECRETS_KEY): (.+)$/gm)];
    expect(settings).toHaveLength(3);
    for (const [, value] of settings) expect(value).toMatch(secret);
  });
});
