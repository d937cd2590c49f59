import { randomBytes } from 'node:crypto';
import { AppConfig, ConfigError } from '../../src/core/config/app-config.js';
import { SecretBox } from '../../src/core/crypto/secret-box.js';

const KEY = randomBytes(32).toString('base64');

describe('configuration', () => {
  it('names every bad variable at once', () => {
    let error: unknown;
    try {
      new AppConfig('api', { PORT: 'eighty', DATABASE_URL: 'mysql://x', REDIS_URL: 'http://nope' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain('PORT');
    expect(message).toContain('DATABASE_URL');
    expect(message).toContain('REDIS_URL');
  });

  it('defaults to the embedded database, in-process jobs and HTTPS-only in production', () => {
    const config = new AppConfig('api', { SECRETS_KEY: KEY, TRUST_PROXY: 'loopback' });
    expect(config.embedded).toBe(true);
    expect(config.queue.redisUrl).toBeNull();
    expect(config.http.allowHttp).toBe(false);
    expect(new AppConfig('api', { NODE_ENV: 'development' }).http.allowHttp).toBe(true);
  });

  it('refuses a production API that could only answer 403 https_required, naming the settings', () => {
    const refuse = (env: Record<string, string | undefined>) => () =>
      new AppConfig('api', { NODE_ENV: 'production', SECRETS_KEY: KEY, ...env });
    for (const env of [{}, { ALLOW_HTTP: 'false' }, { TRUST_PROXY: 'false' }, { TRUST_PROXY: '0' }]) {
      expect(refuse(env)).toThrow(ConfigError);
      expect(refuse(env)).toThrow(/TLS_CERT_FILE.*TLS_KEY_FILE.*TRUST_PROXY.*ALLOW_HTTP=true/s);
    }
    expect(refuse({ TRUST_PROXY: '10.0.0.0/8' })).not.toThrow();
    expect(refuse({ TRUST_PROXY: '1' })).not.toThrow();
    expect(refuse({ TLS_CERT_FILE: '/tmp/cert.pem', TLS_KEY_FILE: '/tmp/key.pem' })).not.toThrow();
    expect(refuse({ ALLOW_HTTP: 'true' })).not.toThrow();
    // Only the API serves HTTP; the worker and the command line start as before.
    expect(() => new AppConfig('worker', { NODE_ENV: 'production', SECRETS_KEY: KEY })).not.toThrow();
    expect(() => new AppConfig('cli', { NODE_ENV: 'production' })).not.toThrow();
  });

  it('reads CORS_ORIGINS as exact origins, or the wildcard alone', () => {
    const origins = (value?: string) =>
      new AppConfig('api', { NODE_ENV: 'test', CORS_ORIGINS: value }).http.corsOrigins;
    expect(origins()).toEqual([]);
    expect(origins(' https://app.example.com, http://localhost:5173 ,https://app.example.com')).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
    ]);
    expect(origins('*')).toEqual(['*']);
    for (const bad of [
      'https://app.example.com/',
      'https://app.example.com/path',
      'app.example.com',
      'https://APP.example.com',
      'https://app.example.com:443',
      'ftp://files.example.com',
      '*, https://app.example.com',
    ]) {
      expect(() => origins(bad)).toThrow(ConfigError);
      expect(() => origins(bad)).toThrow(/CORS_ORIGINS/);
    }
  });

  it('limits failed authentications to 30 per address and window by default', () => {
    expect(new AppConfig('api', { NODE_ENV: 'test' }).http.authFailureLimitMax).toBe(30);
    expect(
      new AppConfig('api', { NODE_ENV: 'test', AUTH_FAILURE_LIMIT_MAX: '0' }).http.authFailureLimitMax,
    ).toBe(0);
    expect(() => new AppConfig('api', { NODE_ENV: 'test', AUTH_FAILURE_LIMIT_MAX: '-1' })).toThrow(
      /AUTH_FAILURE_LIMIT_MAX/,
    );
  });

  it('recovers a killed worker’s run within about a minute, and reports a queue stalled past 2 minutes, by default', () => {
    const { queue } = new AppConfig('worker', { NODE_ENV: 'test' });
    // The run's lease runs out at most JOB_LEASE_SECONDS after the dead worker's last renewal;
    // the next relay pass takes it over.
    expect(queue.jobLeaseSeconds + queue.relayIntervalMs / 1000).toBeLessThanOrEqual(60);
    expect(queue.jobLeaseSeconds).toBeGreaterThanOrEqual(30);
    expect(queue.stallSeconds).toBe(120);
    expect(new AppConfig('api', { NODE_ENV: 'test', QUEUE_STALL_SECONDS: '5' }).queue.stallSeconds).toBe(5);
    expect(() => new AppConfig('api', { NODE_ENV: 'test', QUEUE_STALL_SECONDS: '0' })).toThrow(
      /QUEUE_STALL_SECONDS/,
    );
  });

  it('requires TLS certificate and key together', () => {
    expect(() => new AppConfig('api', { TLS_CERT_FILE: '/tmp/cert.pem' })).toThrow(
      /TLS_CERT_FILE and TLS_KEY_FILE/,
    );
  });

  it('requires SECRETS_KEY in production and uses a development key elsewhere', () => {
    expect(() => new AppConfig('api', {})).toThrow(/SECRETS_KEY is required in production/);
    expect(() => new AppConfig('worker', { NODE_ENV: 'production' })).toThrow(/SECRETS_KEY/);
    expect(new AppConfig('worker', { SECRETS_KEY: KEY }).secretsKey).toEqual(Buffer.from(KEY, 'base64'));
    const dev = new AppConfig('api', { NODE_ENV: 'development' });
    expect(dev.secretsKeyIsDevelopmentDefault).toBe(true);
    expect(dev.secretsKey).toHaveLength(32);
    expect(() => new AppConfig('api', { NODE_ENV: 'test', SECRETS_KEY: 'too-short' })).toThrow(
      /SECRETS_KEY must be/,
    );
  });
});

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('opens what it sealed, for the same context only', () => {
    const sealed = box.seal('s3cret', 'accounts:1:embed_secret');
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealed).not.toContain('s3cret');
    expect(box.open(sealed, 'accounts:1:embed_secret').toString()).toBe('s3cret');
    expect(() => box.open(sealed, 'accounts:2:embed_secret')).toThrow();
  });

  it('seals the same value differently each time and refuses altered or foreign ciphertexts', () => {
    const a = box.seal('value', 'c');
    expect(box.seal('value', 'c')).not.toBe(a);
    const parts = a.split('.');
    const body = Buffer.from(parts[3], 'base64url');
    body[0] ^= 1;
    expect(() => box.open([...parts.slice(0, 3), body.toString('base64url')].join('.'), 'c')).toThrow();
    expect(() => new SecretBox(randomBytes(32)).open(a, 'c')).toThrow();
    expect(() => box.open('not-sealed', 'c')).toThrow('not a sealed secret');
  });
});
