import { randomBytes } from 'node:crypto';
import { SecretBoxService } from '../../src/core/crypto/secret-box.service.js';
import { EnvVarsService } from '../../src/modules/deployments/env-vars.service.js';
import { envVarContext } from '../../src/modules/deployments/env-vars.rules.js';
import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import { postDeployment } from '../support/factories.js';
import { startProcess } from '../support/process.js';

interface Item {
  name: string;
  value: string;
}

/** A value no other test sends, to look for it where it must never be. */
const secret = (label: string) => `${label}-${randomBytes(12).toString('hex')}`;

describe('deployment env vars', () => {
  let t: TestApp;
  let viewer: Actor;
  let developer: Actor;
  let other: Actor;
  let otherDeploymentId: number;

  const create = async (actor: Actor = t.admin) =>
    (await postDeployment(t, actor, { creationStep: 'project' })).id;
  const url = (id: number | string) => `/api/v1/deployments/${id}/env-vars`;
  const put = (id: number | string, body: unknown, actor: Actor = t.admin) =>
    t
      .http()
      .put(url(id))
      .set(bearer(actor.token))
      .send(body as object);
  const set = (id: number | string, vars: Array<{ name: string; value: string | null }>, actor?: Actor) =>
    put(id, { env_variables: vars }, actor);
  const get = (id: number | string, query: Record<string, unknown> = {}, actor: Actor = t.admin) =>
    t.http().get(url(id)).query(query).set(bearer(actor.token));
  /** Every variable as GET pages through them (name → value read back). */
  const all = async (id: number, actor: Actor = t.admin): Promise<Record<string, string>> => {
    const out: Record<string, string> = {};
    let after: string | undefined;
    for (;;) {
      const res = await get(id, { first: 1000, ...(after ? { after } : {}) }, actor);
      expect(res.status).toBe(200);
      for (const i of res.body.items as Item[]) out[i.name] = i.value;
      if (!res.body.pageInfo.hasNextPage) return out;
      after = res.body.pageInfo.endCursor;
    }
  };
  const stored = (id: number) =>
    t.sql<{ name: string; value_sealed: string; account_id: number }>(
      `SELECT name, value_sealed, account_id FROM deployment_env_vars WHERE deployment_id = $1 ORDER BY name`,
      [id],
    );
  const values = (id: number, accountId = t.admin.accountId) =>
    t.app.get(EnvVarsService).values(accountId, id);

  beforeAll(async () => {
    t = await startApp();
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'] });
    developer = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
    other = await newAccount(t, 'globex');
    otherDeploymentId = await create(other);
    expect((await set(otherDeploymentId, [{ name: 'THEIRS', value: 'theirs' }], other)).status).toBe(200);
  });
  afterAll(() => t.close());

  describe('GET and PUT', () => {
    it('starts empty, in the list shape with the deprecated data', async () => {
      const id = await create();
      const res = await get(id);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        items: [],
        data: [],
        pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null },
      });
    });

    it('upserts by name and answers every variable in name order, secret names masked', async () => {
      const id = await create();
      const password = secret('pw');
      const res = await set(id, [
        { name: 'CUBEJS_DB_PASS', value: password },
        { name: 'CUBEJS_DB_HOST', value: 'db.internal' },
        { name: 'CUBEJS_LOG_LEVEL', value: 'info' },
      ]);
      expect(res.status).toBe(200);
      const expected = [
        { name: 'CUBEJS_DB_HOST', value: 'db.internal' },
        { name: 'CUBEJS_DB_PASS', value: '[ENCRYPTED]' },
        { name: 'CUBEJS_LOG_LEVEL', value: 'info' },
      ];
      expect(res.body).toEqual({
        items: expected,
        data: expected,
        pageInfo: {
          hasNextPage: false,
          hasPreviousPage: false,
          startCursor: expect.any(String),
          endCursor: expect.any(String),
        },
      });
      expect(JSON.stringify(res.body)).not.toContain(password);
      const read = await get(id);
      expect(read.body.items).toEqual(expected);
      expect(read.body.data).toEqual(expected);

      // Variables left out keep their values; a sent one is replaced; null removes one.
      const next = await set(id, [
        { name: 'CUBEJS_DB_HOST', value: 'db2.internal' },
        { name: 'CUBEJS_LOG_LEVEL', value: null },
        { name: 'NEVER_SET', value: null },
        { name: 'CUBEJS_EXTERNAL', value: '' },
      ]);
      expect(next.status).toBe(200);
      expect(next.body.items).toEqual([
        { name: 'CUBEJS_DB_HOST', value: 'db2.internal' },
        { name: 'CUBEJS_DB_PASS', value: '[ENCRYPTED]' },
        { name: 'CUBEJS_EXTERNAL', value: '' },
      ]);
      expect(await values(id)).toEqual(
        new Map([
          ['CUBEJS_DB_HOST', 'db2.internal'],
          ['CUBEJS_DB_PASS', password],
          ['CUBEJS_EXTERNAL', ''],
        ]),
      );

      // An empty list changes nothing and answers the list.
      const none = await set(id, []);
      expect(none.status).toBe(200);
      expect(none.body.items).toHaveLength(3);
    });

    it('masks every name containing PASS, SECRET, TOKEN, KEY or CREDENTIAL, in any case', async () => {
      const id = await create();
      const names = [
        'db_password',
        'CLIENT_SECRET',
        'GitHubToken',
        'API_KEY',
        'MONKEY_BUSINESS',
        'GOOGLE_CREDENTIALS',
        'PASSWD',
        'PLAIN',
      ];
      const sent = Object.fromEntries(names.map((n) => [n, secret(n)]));
      const res = await set(
        id,
        names.map((name) => ({ name, value: sent[name] })),
      );
      expect(res.status).toBe(200);
      const read = await all(id);
      for (const name of names) {
        const expected = name === 'PLAIN' ? sent[name] : '[ENCRYPTED]';
        expect({ name, value: read[name] }).toEqual({ name, value: expected });
      }
      const viewed = await all(id, viewer);
      expect(viewed).toEqual(read);
      expect((await values(id)).get('API_KEY')).toBe(sent.API_KEY);
    });

    it('pages in byte order of the names with first/after', async () => {
      const id = await create();
      const names = ['b', 'A', '_x', 'B', 'a', 'Z9'];
      expect(
        (
          await set(
            id,
            names.map((name) => ({ name, value: name.toLowerCase() })),
          )
        ).status,
      ).toBe(200);
      const seen: string[] = [];
      let after: string | undefined;
      for (let pages = 1; ; pages++) {
        const res = await get(id, { first: 2, ...(after ? { after } : {}) });
        expect(res.status).toBe(200);
        expect(res.body.data).toEqual(res.body.items);
        expect(res.body.pageInfo.hasPreviousPage).toBe(after !== undefined);
        seen.push(...(res.body.items as Item[]).map((i) => i.name));
        if (!res.body.pageInfo.hasNextPage) {
          expect(pages).toBe(3);
          break;
        }
        after = res.body.pageInfo.endCursor;
      }
      expect(seen).toEqual(['A', 'B', 'Z9', '_x', 'a', 'b']);
    });

    it.each([
      ['a garbage cursor', { after: '!!!' }, 'invalid_cursor'],
      ['a cursor of another list', { after: 'WzFd' }, 'invalid_cursor'],
      ['first=0', { first: 0 }, 'validation_failed'],
      ['first too large', { first: 1001 }, 'validation_failed'],
      ['the legacy limit', { limit: 1 }, 'validation_failed'],
      ['an unknown parameter', { name: 'A' }, 'validation_failed'],
    ])('GET answers 400 for %s', async (_, query, code) => {
      const id = await create();
      const res = await get(id, query);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, code);
    });
  });

  describe('refused writes change nothing and never echo a value', () => {
    let id: number;
    let before: Record<string, string>;
    let sealedBefore: unknown;
    const keep = secret('kept');

    beforeAll(async () => {
      id = await create();
      expect((await set(id, [{ name: 'KEEP', value: keep }])).status).toBe(200);
      before = await all(id);
      sealedBefore = await stored(id);
    });
    afterEach(async () => {
      expect(await all(id)).toEqual(before);
      expect(await stored(id)).toEqual(sealedBefore);
    });

    it('refuses the [ENCRYPTED] placeholder with env_var_placeholder, however padded', async () => {
      const value = secret('v');
      for (const placeholder of ['[ENCRYPTED]', ' [ENCRYPTED]\n']) {
        const res = await set(id, [
          { name: 'NEW_ONE', value },
          { name: 'DB_PASSWORD', value: placeholder },
        ]);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'env_var_placeholder');
        expect(res.body.message).toContain('DB_PASSWORD');
        expect(JSON.stringify(res.body)).not.toContain(value);
      }
    });

    it.each([['1ABC'], ['A-B'], ['A B'], ['ÄPFEL'], ['A.B'], ['PATH=/x']])(
      'refuses the new name %s with invalid_env_var_name naming it, never the value',
      async (name) => {
        const value = secret('v');
        const res = await set(id, [
          { name: 'GOOD', value },
          { name, value },
        ]);
        expect(res.status).toBe(400);
        expectErrorShape(res.body, 400, 'invalid_env_var_name');
        expect(res.body.message).toContain(JSON.stringify(name));
        expect(JSON.stringify(res.body)).not.toContain(value);
      },
    );

    it('refuses a name sent twice with duplicate_env_var_name', async () => {
      const value = secret('v');
      const res = await set(id, [
        { name: 'TWICE', value },
        { name: 'OTHER', value: 'x' },
        { name: 'TWICE', value: null },
      ]);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'duplicate_env_var_name');
      expect(res.body.message).toContain('TWICE');
      expect(JSON.stringify(res.body)).not.toContain(value);
    });

    it.each([
      ['no env_variables', {}],
      ['env_variables not a list', { env_variables: 'A=1' }],
      ['an item that is not an object', { env_variables: ['A=1'] }],
      ['a nested list', { env_variables: [[{ name: 'A', value: '1' }]] }],
      ['an item without value', { env_variables: [{ name: 'A' }] }],
      ['an item without name', { env_variables: [{ value: 'SECRET_VALUE_1' }] }],
      ['a value that is not a string', { env_variables: [{ name: 'A', value: 5 }] }],
      ['an empty name', { env_variables: [{ name: '', value: 'SECRET_VALUE_1' }] }],
      ['a name too long', { env_variables: [{ name: 'A'.repeat(129), value: 'SECRET_VALUE_1' }] }],
      ['a value too long', { env_variables: [{ name: 'A', value: `SECRET_VALUE_1${'x'.repeat(32_768)}` }] }],
      [
        'an unknown field of an item',
        { env_variables: [{ name: 'A', value: 'SECRET_VALUE_1', secret: true }] },
      ],
      ['an unknown field', { env_variables: [], replace: true }],
      [
        'too many items',
        {
          env_variables: Array.from({ length: 101 }, (_, i) => ({ name: `V${i}`, value: 'SECRET_VALUE_1' })),
        },
      ],
    ])('refuses %s with validation_failed', async (_, body) => {
      const res = await put(id, body);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body)).not.toContain('SECRET_VALUE_1');
    });

    it('refuses an unknown query parameter and a bad id', async () => {
      const query = await t
        .http()
        .put(`${url(id)}?force=true`)
        .set(bearer(t.admin.token))
        .send({ env_variables: [] });
      expectErrorShape(query.body, 400, 'validation_failed');
      for (const bad of ['abc', '0', '99999999999']) {
        const res = await set(bad, [{ name: 'A', value: 'x' }]);
        expectErrorShape(res.body, 400, 'validation_failed');
        expect(JSON.stringify(res.body.message)).toContain('deploymentId');
      }
    });
  });

  describe('legacy names', () => {
    it('lets a stored name that is no identifier be resent, updated and removed; not added again', async () => {
      const id = await create();
      const legacy = 'legacy-name.v1';
      await t.sql(
        `INSERT INTO deployment_env_vars (deployment_id, account_id, name, value_sealed) VALUES ($1, $2, $3, $4)`,
        [
          id,
          t.admin.accountId,
          legacy,
          t.app.get(SecretBoxService).seal('old', envVarContext(t.admin.accountId, id, legacy)),
        ],
      );
      expect(await all(id)).toEqual({ [legacy]: 'old' });
      const updated = await set(id, [{ name: legacy, value: 'new' }]);
      expect(updated.status).toBe(200);
      expect(await all(id)).toEqual({ [legacy]: 'new' });
      // A name differing only in case is a new name.
      expectErrorShape(
        (await set(id, [{ name: 'LEGACY-NAME.V1', value: 'x' }])).body,
        400,
        'invalid_env_var_name',
      );
      const removed = await set(id, [{ name: legacy, value: null }]);
      expect(removed.body.items).toEqual([]);
      expectErrorShape((await set(id, [{ name: legacy, value: 'again' }])).body, 400, 'invalid_env_var_name');
    });
  });

  describe('limits', () => {
    it('holds at most 500 variables per deployment; replacing and removing still work at the limit', async () => {
      const id = await create();
      for (let batch = 0; batch < 5; batch++) {
        const res = await set(
          id,
          Array.from({ length: 100 }, (_, i) => ({ name: `V${batch * 100 + i}`, value: `${i}` })),
        );
        expect(res.status).toBe(200);
        expect(res.body.items).toHaveLength((batch + 1) * 100);
      }
      const over = await set(id, [
        { name: 'V0', value: 'changed' },
        { name: 'ONE_TOO_MANY', value: 'x' },
      ]);
      expect(over.status).toBe(400);
      expectErrorShape(over.body, 400, 'too_many_env_vars');
      expect(over.body.message).toContain('500');
      const after = await all(id);
      expect(Object.keys(after)).toHaveLength(500);
      expect(after.V0).toBe('0');

      expect((await set(id, [{ name: 'V0', value: 'changed' }])).status).toBe(200);
      const swap = await set(id, [
        { name: 'V1', value: null },
        { name: 'REPLACEMENT', value: 'x' },
      ]);
      expect(swap.status).toBe(200);
      expect(swap.body.items).toHaveLength(500);
      expect(swap.body.pageInfo.hasNextPage).toBe(false);
    });

    it('takes a value of 32768 characters', async () => {
      const id = await create();
      const long = 'x'.repeat(32_768);
      expect((await set(id, [{ name: 'LONG', value: long }])).status).toBe(200);
      expect((await all(id)).LONG).toBe(long);
    });
  });

  describe('access', () => {
    let id: number;
    beforeAll(async () => {
      id = await create();
      expect((await set(id, [{ name: 'A', value: 'a' }])).status).toBe(200);
    });

    it('answers 401 without a token', async () => {
      expectErrorShape((await t.http().get(url(id))).body, 401, 'unauthorized');
      const res = await t
        .http()
        .put(url(id))
        .send({ env_variables: [{ name: 'A', value: 'hijacked' }] });
      expectErrorShape(res.body, 401, 'unauthorized');
      expect(await all(id)).toEqual({ A: 'a' });
    });

    it('lets DeploymentRead read; writing needs SecretsManage (403 to a Developer)', async () => {
      expect(await all(id, viewer)).toEqual({ A: 'a' });
      const guest = await newUser(t, t.admin, { defaultRoles: ['Guest'] });
      const unreadable = await get(id, {}, guest);
      expectErrorShape(unreadable.body, 403, 'forbidden');
      expect(unreadable.body.message).toContain('DeploymentRead');
      for (const actor of [viewer, developer]) {
        const res = await set(id, [{ name: 'A', value: 'hijacked' }], actor);
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
        expect(res.body.message).toContain('SecretsManage');
      }
      expect(await all(id)).toEqual({ A: 'a' });
    });

    it('takes SecretsManage granted on the deployment, for that deployment only', async () => {
      const grantee = await newUser(t, t.admin, { defaultRoles: ['Developer'] });
      const granted = await t
        .http()
        .put(`/api/v1/users/${grantee.userId}/policies`)
        .set(bearer(t.admin.token))
        .send({
          policies: [{ resourceType: 'Deployment', actions: ['SecretsManage'], resources: [String(id)] }],
        });
      expect(granted.status).toBe(200);
      expect((await set(id, [{ name: 'B', value: 'b' }], grantee)).status).toBe(200);
      const elsewhere = await create();
      const refused = await set(elsewhere, [{ name: 'B', value: 'b' }], grantee);
      expectErrorShape(refused.body, 403, 'forbidden');
      expect(await all(elsewhere)).toEqual({});
    });

    it("answers 404 deployment_not_found for another account's deployment and a missing one", async () => {
      for (const target of [otherDeploymentId, 2_000_000_000]) {
        expectErrorShape((await get(target)).body, 404, 'deployment_not_found');
        const res = await set(target, [{ name: 'THEIRS', value: 'hijacked' }]);
        expectErrorShape(res.body, 404, 'deployment_not_found');
      }
      expect(await all(otherDeploymentId, other)).toEqual({ THEIRS: 'theirs' });
    });
  });

  describe('at rest', () => {
    it('stores only sealed values, bound to their account, deployment and name', async () => {
      const id = await create();
      const second = await create();
      const host = secret('host');
      const password = secret('pw');
      await set(id, [
        { name: 'HOST', value: host },
        { name: 'PASSWORD', value: password },
        { name: 'PORT', value: '5432' },
      ]);
      await set(second, [{ name: 'HOST', value: 'second-host' }]);
      const rows = await stored(id);
      expect(rows.map((r) => r.name)).toEqual(['HOST', 'PASSWORD', 'PORT']);
      for (const row of rows) {
        expect(row.value_sealed).toMatch(/^v1\./);
        expect(row.account_id).toBe(t.admin.accountId);
      }
      const dump = JSON.stringify(await t.sql(`SELECT * FROM deployment_env_vars`));
      for (const plain of [host, password, Buffer.from(password).toString('base64')]) {
        expect(dump).not.toContain(plain);
      }

      // A sealed value copied to another name, or to another deployment's row, does not open.
      const sealedHost = rows.find((r) => r.name === 'HOST')!.value_sealed;
      await t.sql(
        `UPDATE deployment_env_vars SET value_sealed = $1 WHERE deployment_id = $2 AND name = 'PORT'`,
        [sealedHost, id],
      );
      await t.sql(
        `UPDATE deployment_env_vars SET value_sealed = $1 WHERE deployment_id = $2 AND name = 'HOST'`,
        [sealedHost, second],
      );
      expect(await all(id)).toEqual({ HOST: host, PASSWORD: '[ENCRYPTED]', PORT: '[ENCRYPTED]' });
      expect(await all(second)).toEqual({ HOST: '[ENCRYPTED]' });
      await expect(values(id)).rejects.toThrow(/PORT/);
      await expect(values(second)).rejects.toThrow(/HOST/);
      await expect(values(second)).rejects.not.toThrow(host);
      // Another account, same deployment id: does not open either.
      await expect(values(id, other.accountId)).rejects.toThrow(/does not open/);
      // Writing the variable again repairs it.
      await set(id, [{ name: 'PORT', value: '5433' }]);
      expect((await values(id)).get('PORT')).toBe('5433');
    });

    it('goes with its deployment', async () => {
      const id = await create();
      await set(id, [{ name: 'A', value: 'a' }]);
      expect((await t.http().delete(`/api/v1/deployments/${id}`).set(bearer(t.admin.token))).status).toBe(
        200,
      );
      expect(await stored(id)).toEqual([]);
    });
  });

  describe('concurrent writes', () => {
    it('lands every name of parallel PUTs of distinct names', async () => {
      const id = await create();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => set(id, [{ name: `PARALLEL_${i}`, value: `v${i}` }])),
      );
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(await all(id)).toEqual(
        Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`PARALLEL_${i}`, `v${i}`])),
      );
    });

    it('leaves one of the values of parallel PUTs of one name', async () => {
      const id = await create();
      const sent = Array.from({ length: 10 }, (_, i) => `value-${i}`);
      const results = await Promise.all(sent.map((value) => set(id, [{ name: 'SAME', value }])));
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
      const final = await all(id);
      expect(Object.keys(final)).toEqual(['SAME']);
      expect(sent).toContain(final.SAME);
      expect(await stored(id)).toHaveLength(1);
    });
  });

  describe('never logged or audited in clear', () => {
    it('keeps every value out of the log lines and the audit log, whatever the request', async () => {
      const id = await create();
      // The API as it runs in production, logging everything it logs (trace), on this database.
      const proc = startProcess('dist/src/main.js', {
        DATABASE_URL: t.databaseUrl,
        REDIS_URL: t.config.queue.redisUrl ?? undefined,
        QUEUE_PREFIX: t.config.queue.prefix,
        REPOS_DIR: t.config.dataModel.reposDir,
        SECRETS_KEY: t.config.secretsKey.toString('base64'),
        PORT: '0',
        HOST: '127.0.0.1',
        NODE_ENV: 'test',
        LOG_LEVEL: 'trace',
        RATE_LIMIT_MAX: '1000000',
      });
      const sentValues: string[] = [];
      const v = (label: string) => {
        const value = secret(label);
        sentValues.push(value);
        return value;
      };
      let port = 0;
      const call = async (method: string, path: string, token: string, body?: string) => {
        const res = await fetch(`http://127.0.0.1:${port}${path}`, {
          method,
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body,
        });
        return { status: res.status, text: await res.text() };
      };
      const send = (vars: unknown, token = t.admin.token) =>
        call('PUT', url(id), token, JSON.stringify({ env_variables: vars }));
      try {
        port = await proc.listening(60_000);
        expect(
          (await call('PUT', '/api/v1/tenant/settings', t.admin.token, '{"auditLogEnabled":true}')).status,
        ).toBe(200);
        const answers = [
          await send([
            { name: 'CUBEJS_DB_PASS', value: v('pass') },
            { name: 'CUBEJS_API_SECRET', value: v('api-secret') },
            { name: 'CUBEJS_DB_HOST', value: v('host') },
          ]),
          await send([{ name: '1BAD', value: v('bad-name') }]),
          await send([
            { name: 'GOOD', value: v('beside-placeholder') },
            { name: 'CUBEJS_DB_PASS', value: '[ENCRYPTED]' },
          ]),
          await send([
            { name: 'TWICE', value: v('twice') },
            { name: 'TWICE', value: v('twice') },
          ]),
          await send([{ name: 'LONG_SECRET', value: v('too-long') + 'x'.repeat(40_000) }]),
          await send([{ name: 'TOKEN', value: v('unknown-field'), extra: v('extra') }]),
          await send([{ name: 'TOKEN', value: v('forbidden') }], developer.token),
          await call(
            'PUT',
            url(id),
            t.admin.token,
            `{"env_variables":[{"name":"A","value":"${v('malformed')}"`,
          ),
          await call(
            'PUT',
            url(otherDeploymentId),
            t.admin.token,
            JSON.stringify({ env_variables: [{ name: 'X', value: v('foreign') }] }),
          ),
          await call('GET', url(id), t.admin.token),
        ];
        expect(answers.map((a) => a.status)).toEqual([200, 400, 400, 400, 400, 400, 403, 400, 404, 200]);
        // The host is not a secret name: the one place its value appears is a read of the list.
        const host = sentValues[2];
        expect(answers.filter((a) => a.text.includes(host)).length).toBe(2);
        for (const [i, a] of answers.entries()) {
          for (const value of sentValues.filter((s) => s !== host)) {
            expect({ answer: i, leaked: a.text.includes(value) }).toEqual({ answer: i, leaked: false });
          }
        }
        // What the process logged: the requests, with none of the values.
        // The last request's line is written once it has finished.
        await proc.waitFor(new RegExp(`"method":"GET","url":"${url(id)}"`), 10_000);
        const output = proc.output();
        expect(output).toContain(url(id));
        for (const value of sentValues)
          expect({ value, logged: output.includes(value) }).toEqual({ value, logged: false });
        // The audit log recorded the writes, succeeded and refused, with none of the values.
        const audit = await t.sql<{ action: string; outcome: string; row: string }>(
          `SELECT action, outcome, row_to_json(a)::text AS row FROM audit_events a WHERE path LIKE '%/env-vars'`,
        );
        expect(audit.filter((a) => a.action === 'setEnvVariables' && a.outcome === 'success')).toHaveLength(
          1,
        );
        expect(audit.filter((a) => a.outcome === 'failure').length).toBeGreaterThanOrEqual(6);
        const dump = JSON.stringify(await t.sql(`SELECT * FROM audit_events`));
        for (const value of sentValues)
          expect({ value, audited: dump.includes(value) }).toEqual({ value, audited: false });
      } finally {
        proc.child.kill('SIGTERM');
        await proc.exit;
      }
    });
  });
});
