import { AppConfig, ConfigError } from '../../src/core/config/app-config.js';

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
    const config = new AppConfig('api', {});
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
});
