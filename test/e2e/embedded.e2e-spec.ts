import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { getJson as get, startProcess } from '../support/process.js';

/**
 * The service started with no configuration at all: the embedded database in a data directory,
 * no Redis. A file of its own (it starts the process three times), so it runs beside the other
 * process tests instead of after them.
 */
const MAIN = 'dist/src/main.js';
/** Longest wait for one start of the process, ms. */
const START_MS = 180_000;

describe('the embedded default (no DATABASE_URL, no REDIS_URL)', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'platform-data-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it(
    'starts with no configuration, prints an admin token once, keeps data across restarts, and locks its directory',
    async () => {
      const env = { DATA_DIR: dataDir, PORT: '0', NODE_ENV: 'development' };
      const first = startProcess(MAIN, env);
      // The first start runs every migration on the embedded (WebAssembly) PostgreSQL: about 20 s
      // on an idle 2-core machine, several times that when the machine is busy.
      const [, token] = await first.waitFor(/Admin token[^\n]*\n\s*(pat_\S+)/, START_MS);
      const port = await first.listening(START_MS);
      const me = await get(port, '/api/v1/users/me', token);
      expect(me.body).toEqual(expect.objectContaining({ email: 'admin@example.com', isAdmin: true }));
      expect((await get(port, '/health/ready')).body.redis.status).toBe('not-configured');
      expect(first.output()).toContain('background jobs run in-process');

      const second = startProcess(MAIN, env);
      expect(await second.exit).not.toBe(0);
      expect(second.output()).toContain('in use by another process');

      first.child.kill('SIGTERM');
      expect(await first.exit).toBe(0);

      const restarted = startProcess(MAIN, env);
      const again = await restarted.listening(START_MS);
      expect((await get(again, '/api/v1/users/me', token)).status).toBe(200);
      expect(restarted.output()).not.toContain('Admin token');
      restarted.child.kill('SIGTERM');
      expect(await restarted.exit).toBe(0);
    },
    3 * START_MS + 60_000,
  );
});
