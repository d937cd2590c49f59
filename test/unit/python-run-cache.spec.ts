import { AppConfig } from '../../src/core/config/app-config.js';
import type { PythonAnalysisFilteredRunDto } from '../../src/modules/python-runs/dto/python-run.dto.js';
import { PythonRunCache, type PythonRunKey } from '../../src/modules/python-runs/python-run.cache.js';

/** The cache without Redis (in the process); with Redis it is exercised by test/e2e/python-run. */
describe('python run cache (in-process)', () => {
  const cacheWith = (env: Record<string, string> = {}) =>
    new PythonRunCache(new AppConfig('api', { NODE_ENV: 'test', ...env }));
  const key: PythonRunKey = {
    accountId: 1,
    deploymentId: 2,
    embedUserId: 3,
    securityContext: { tenant: 'acme', region: 'eu' },
    reportId: 4,
    code: 'output = 1',
    sqlQuery: 'SELECT 1',
  };
  const answer = (n: number): PythonAnalysisFilteredRunDto => ({
    at: '2026-11-24T00:00:00.000Z',
    stdout: '',
    stderr: '',
    inputRowCount: n,
    outputData: { n },
  });

  it('keys by every input, whatever the order of the security context’s keys', () => {
    const cache = cacheWith();
    const base = cache.keyOf(key);
    expect(cache.keyOf({ ...key, securityContext: { region: 'eu', tenant: 'acme' } })).toBe(base);
    for (const change of [
      { accountId: 9 },
      { deploymentId: 9 },
      { embedUserId: 9 },
      { securityContext: { tenant: 'acme', region: 'us' } },
      { securityContext: null },
      { reportId: 9 },
      { code: 'output = 2' },
      { sqlQuery: 'SELECT 2' },
    ]) {
      expect({ change, differs: cache.keyOf({ ...key, ...change }) !== base }).toEqual({
        change,
        differs: true,
      });
    }
    expect(base).toMatch(/^[0-9a-f]{64}$/);
  });

  it('answers what was stored, until it expires', async () => {
    const cache = cacheWith();
    const k = cache.keyOf(key);
    expect(await cache.get(k)).toBeUndefined();
    await cache.set(k, answer(1));
    expect(await cache.get(k)).toEqual(answer(1));
    const now = Date.now();
    const clock = jest.spyOn(Date, 'now').mockReturnValue(now + 61_000);
    try {
      expect(await cache.get(k)).toBeUndefined();
    } finally {
      clock.mockRestore();
    }
  });

  it('keeps nothing with PYTHON_RUN_CACHE_SECONDS=0', async () => {
    const cache = cacheWith({ PYTHON_RUN_CACHE_SECONDS: '0' });
    const k = cache.keyOf(key);
    await cache.set(k, answer(1));
    expect(await cache.get(k)).toBeUndefined();
  });

  it('holds at most 500 answers, dropping the oldest', async () => {
    const cache = cacheWith();
    const keys = Array.from({ length: 501 }, (_, i) => cache.keyOf({ ...key, reportId: i }));
    for (const [i, k] of keys.entries()) await cache.set(k, answer(i));
    expect(await cache.get(keys[0])).toBeUndefined();
    expect(await cache.get(keys[1])).toEqual(answer(1));
    expect(await cache.get(keys[500])).toEqual(answer(500));
  });
});
