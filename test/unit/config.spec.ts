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
    const config = new AppConfig('api', { SECRETS_KEY: KEY });
    expect(config.embedded).toBe(true);
    expect(config.queue.redisUrl).toBeNull();
    expect(config.http.allowHttp).toBe(false);
    expect(new AppConfig('api', { NODE_ENV: 'development' }).http.allowHttp).toBe(true);
  });

  it('requires TLS certificate and key together', () => {
    expect(() => new AppConfig('api', { TLS_CERT_FILE: '/tmp/cert.pem' })).toThrow(
      /TLS_CERT_FILE and TLS_KEY_FILE/,
    );
  });

  it('requires SECRETS_KEY in production and uses a development key elsewhere', () => {
    expect(() => new AppConfig('api', {})).toThrow(/SECRETS_KEY is required in production/);
    expect(() => new AppConfig('worker', { NODE_ENV: 'production' })).toThrow(/SECRETS_KEY/);
    expect(new AppConfig('api', { SECRETS_KEY: KEY }).secretsKey).toEqual(Buffer.from(KEY, 'base64'));
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
