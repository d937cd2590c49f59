import type { DataSource } from 'typeorm';
import { Action } from '../../src/core/auth/action.js';
import type { Principal } from '../../src/core/auth/principal.js';
import { PrincipalCache, type ResolvedToken } from '../../src/core/auth/principal-cache.js';
import type { AppConfig } from '../../src/core/config/app-config.js';
import type { Database } from '../../src/core/database/database.js';

/**
 * The cache's own rules, on the embedded configuration (one process, so no listener): what is
 * kept, for how long, and what a change drops. Across processes: test/e2e/principal-cache.
 */
describe('PrincipalCache', () => {
  const principal: Principal = {
    userId: 1,
    accountId: 1,
    email: 'a@example.test',
    apiKeyId: 7,
    roleIds: [],
    groupIds: [],
    actions: new Set([Action.ReportRead]),
    objectActions: new Set(),
    typeActions: new Map(),
    isAdmin: false,
  };
  const token = (): ResolvedToken => ({ principal, lastUsedAt: null });
  /** After-commit hooks held until `commit()`, as a unit of work holds them. */
  let pending: Array<() => unknown>;
  const commit = () => pending.splice(0).forEach((hook) => hook());

  async function cacheWith(config: Partial<AppConfig>): Promise<PrincipalCache> {
    const db = { afterCommit: (hook: () => unknown) => pending.push(hook) } as unknown as Database;
    const cache = new PrincipalCache(
      { role: 'api', principalCacheTtlMs: 60_000, embedded: true, ...config } as AppConfig,
      db,
      {} as DataSource,
    );
    await cache.onApplicationBootstrap();
    return cache;
  }

  beforeEach(() => {
    pending = [];
  });

  it('keeps a resolved token until a change commits', async () => {
    const cache = await cacheWith({});
    cache.store('h', token(), null, cache.version);
    expect(cache.get('h')?.principal).toBe(principal);
    cache.changed();
    expect(cache.get('h')).toBeDefined(); // not before the change commits
    commit();
    expect(cache.get('h')).toBeUndefined();
  });

  it('does not keep a lookup that raced with a change', async () => {
    const cache = await cacheWith({});
    const version = cache.version; // the lookup starts
    cache.changed();
    commit(); // a change commits while it runs
    cache.store('h', token(), null, version);
    expect(cache.get('h')).toBeUndefined();
    cache.store('h', token(), null, cache.version);
    expect(cache.get('h')).toBeDefined();
  });

  it('never keeps a token past its key’s expiry', async () => {
    const cache = await cacheWith({});
    cache.store('h', token(), new Date(Date.now() - 1), cache.version);
    expect(cache.get('h')).toBeUndefined();
  });

  it('keeps nothing with a time to live of 0, or outside the API process', async () => {
    for (const config of [{ principalCacheTtlMs: 0 }, { role: 'worker' as const }]) {
      const cache = await cacheWith(config);
      cache.store('h', token(), null, cache.version);
      expect(cache.get('h')).toBeUndefined();
      cache.changed();
      expect(pending).toEqual([]);
    }
  });

  it('drops a change’s entries after the statement that made it', async () => {
    const cache = await cacheWith({});
    cache.store('h', token(), null, cache.version);
    let writeDone = false;
    const result = await cache.invalidatedBy(
      new Promise<string>((resolve) =>
        setImmediate(() => {
          writeDone = true;
          resolve('written');
        }),
      ),
    );
    expect(result).toBe('written');
    expect(writeDone).toBe(true);
    commit();
    expect(cache.get('h')).toBeUndefined();
  });
});
