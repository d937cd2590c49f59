import express from 'express';
import { Client } from 'pg';
import request from 'supertest';
import { MIGRATIONS } from '../../migrations/index.js';
import { Database } from '../../src/core/database/database.js';
import { ReportsRepository } from '../../src/modules/reports/reports.repository.js';
import { bearer, newAccount, newUser, startApp, type Actor, type TestApp } from '../support/app.js';
import {
  grantRole,
  insertFolder,
  insertPlacement,
  insertReport,
  insertWorkbook,
  newDeployment,
  newReport,
  reportsPath,
} from '../support/reports.js';

/**
 * The report list's deprecated exact total (`count`, `pagination.total`) read from
 * `report_counts`, which triggers on `reports` keep in the writers' transactions; and list
 * pages serialised with their items once (`serialiseListItemsOnce`), byte for byte as `JSON.stringify`.
 */
describe('report counts', () => {
  let t: TestApp;
  let dep: number;
  let otherDep: number;
  let globex: Actor;
  let globexDep: number;

  beforeAll(async () => {
    t = await startApp();
    dep = await newDeployment(t, t.admin, 'Counted');
    otherDep = await newDeployment(t, t.admin, 'Counted elsewhere');
    globex = await newAccount(t, 'globex');
    globexDep = await newDeployment(t, globex, 'Globex');
  });
  afterAll(async () => {
    await t.close();
  });

  const as = (actor: Actor = t.admin) => bearer(actor.token);
  /** Deletes a report of the deployment as the admin; answers the status. */
  const remove = async (d: number, id: number) =>
    (
      await t
        .http()
        .delete(reportsPath(d, `/${id}`))
        .set(as())
    ).status;
  const list = (d: number, query: Record<string, unknown> = {}, actor: Actor = t.admin) =>
    t.http().get(reportsPath(d)).query(query).set(as(actor));
  const rows = async (d: number): Promise<number> =>
    (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM reports WHERE deployment_id = $1`, [d]))[0].n;
  const counter = async (d: number): Promise<number | null> =>
    (await t.sql<{ n: number }>(`SELECT n FROM report_counts WHERE deployment_id = $1`, [d]))[0]?.n ?? null;

  /** The list's total, the counter and count(*) agree; answers the total. */
  async function expectExact(d: number, expected?: number): Promise<number> {
    const res = await list(d, { first: 1 });
    expect(res.status).toBe(200);
    const n = await rows(d);
    expect(res.body.count).toBe(n);
    expect(res.body.pagination.total).toBe(n);
    expect((await counter(d)) ?? 0).toBe(n);
    if (expected !== undefined) expect(n).toBe(expected);
    return n;
  }

  it('counts creates and deletes exactly, per deployment', async () => {
    await expectExact(dep, 0);
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await newReport(t, t.admin, dep, { name: `R${i}` }));
    await newReport(t, t.admin, otherDep, { name: 'Elsewhere' });
    await expectExact(dep, 5);
    await expectExact(otherDep, 1);
    expect(await remove(dep, made[0].id)).toBe(200);
    // A delete that finds nothing changes nothing.
    expect(await remove(dep, made[0].id)).toBe(404);
    expect(await remove(otherDep, made[1].id)).toBe(404);
    await expectExact(dep, 4);
    await expectExact(otherDep, 1);
  });

  it('counts moves, folder deletes, workbook copies and workbook deletes exactly', async () => {
    const folder = await insertFolder(t, t.admin, dep, 'Box');
    const before = await expectExact(dep);
    const inFolder = await newReport(t, t.admin, dep, { name: 'In the box', folderId: folder });
    const moved = await newReport(t, t.admin, dep, { name: 'Moved' });
    const move = await t
      .http()
      .post(`/api/v1/deployments/${dep}/workspace/move`)
      .set(as())
      .send({ type: 'REPORT', id: moved.id, folderId: folder });
    expect(move.status).toBe(200);
    const put = await t
      .http()
      .put(reportsPath(dep, `/${inFolder.id}`))
      .set(as())
      .send({ folderId: null });
    expect(put.status).toBe(200);
    await expectExact(dep, before + 2);
    // The folder goes; its reports go to the root and still count.
    expect((await t.http().delete(`/api/v1/deployments/${dep}/folders/${folder}`).set(as())).status).toBe(
      200,
    );
    await expectExact(dep, before + 2);

    const workbook = await insertWorkbook(t, t.admin, dep, 'Book');
    for (let i = 0; i < 3; i++) await newReport(t, t.admin, dep, { name: `W${i}`, workbookId: workbook });
    await expectExact(dep, before + 5);
    const copy = await t
      .http()
      .post(`/api/v1/deployments/${dep}/workbooks/${workbook}/duplicate`)
      .set(as())
      .send({});
    expect(copy.status).toBe(200);
    await expectExact(dep, before + 8);
    // The reports of a deleted workbook go with it by foreign key.
    const gone = await t.http().delete(`/api/v1/deployments/${dep}/workbooks/${workbook}`).set(as());
    expect(gone.status).toBe(200);
    await expectExact(dep, before + 5);
    await expectExact(otherDep, 1);
  });

  it('stays exact under 20 concurrent creates and deletes', async () => {
    const doomed = [];
    for (let i = 0; i < 10; i++) doomed.push(await newReport(t, t.admin, dep, { name: `Doomed ${i}` }));
    const before = await expectExact(dep);
    const results = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) =>
        t
          .http()
          .post(reportsPath(dep))
          .set(as())
          .send({ name: `Parallel ${i}` }),
      ),
      ...doomed.map((r) =>
        t
          .http()
          .delete(reportsPath(dep, `/${r.id}`))
          .set(as()),
      ),
      ...Array.from({ length: 4 }, (_, i) =>
        t
          .http()
          .post(reportsPath(otherDep))
          .set(as())
          .send({ name: `Other ${i}` }),
      ),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(Array(24).fill(200));
    await expectExact(dep, before);
    await expectExact(otherDep, 5);
  });

  it('stays exact when a write is rolled back', async () => {
    const before = await expectExact(dep);
    const db = t.app.get(Database);
    const repository = t.app.get(ReportsRepository);
    const victim = await newReport(t, t.admin, dep, { name: 'Survivor', publicId: 'SurvivorAbc1' });
    await expect(
      db.transaction(async () => {
        for (let i = 0; i < 3; i++) {
          await repository.insert({
            accountId: t.admin.accountId,
            deploymentId: dep,
            publicId: null,
            folderId: null,
            workbookId: null,
            name: `Rolled back ${i}`,
            title: null,
            description: null,
            jsonQuery: null,
            sqlQuery: null,
            meta: null,
            pivotItems: null,
            source: null,
            userId: t.admin.userId,
          });
        }
        expect(await repository.delete(t.admin.accountId, dep, victim.id)).toMatchObject({ id: victim.id });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await expectExact(dep, before + 1);
    // A failed statement: a publicId already taken.
    const taken = await t
      .http()
      .post(reportsPath(dep))
      .set(as())
      .send({ name: 'Twin', publicId: victim.publicId });
    expect(taken.status).toBe(409);
    await expectExact(dep, before + 1);
  });

  it('stays exact with 20 concurrent transactions writing to two deployments, some rolled back', async () => {
    const a = await newDeployment(t, t.admin, 'Concurrent A');
    const b = await newDeployment(t, t.admin, 'Concurrent B');
    const clients = Array.from({ length: 20 }, () => new Client({ connectionString: t.databaseUrl }));
    await Promise.all(clients.map((c) => c.connect()));
    try {
      await Promise.all(
        clients.map(async (c, i) => {
          await c.query('BEGIN');
          // One statement over both deployments, in a random order: the trigger takes the two
          // counters in deployment order, so these never deadlock.
          await c.query(
            `INSERT INTO reports (account_id, deployment_id, name, user_id, created_by)
             SELECT $1, CASE WHEN g % 2 = 0 THEN $2::int ELSE $3::int END, 'C' || $5 || '-' || g, $4, $4
             FROM generate_series(1, 7) g ORDER BY random()`,
            [t.admin.accountId, a, b, t.admin.userId, i],
          );
          await c.query(`DELETE FROM reports WHERE name IN ('C' || $1 || '-1', 'C' || $1 || '-2')`, [i]);
          await c.query(i % 4 === 0 ? 'ROLLBACK' : 'COMMIT');
        }),
      );
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
    // 15 committed transactions, each +3 -1 in a (g = 2, 4, 6; 2 deleted), +4 -1 in b.
    await expectExact(a, 15 * 2);
    await expectExact(b, 15 * 3);
  });

  it('counts reports moved between deployments and rows written in bulk', async () => {
    const a = await newDeployment(t, t.admin, 'Bulk A');
    const b = await newDeployment(t, t.admin, 'Bulk B');
    await t.sql(
      `INSERT INTO reports (account_id, deployment_id, name, user_id, created_by)
       SELECT $1, CASE WHEN g % 3 = 0 THEN $3::int ELSE $2::int END, 'Bulk ' || g, $4, $4
       FROM generate_series(1, 30) g`,
      [t.admin.accountId, a, b, t.admin.userId],
    );
    await expectExact(a, 20);
    await expectExact(b, 10);
    // Both ways in one statement, then one way.
    await t.sql(
      `UPDATE reports SET deployment_id = CASE deployment_id WHEN $1::int THEN $2::int ELSE $1::int END
       WHERE id IN ((SELECT id FROM reports WHERE deployment_id = $1 ORDER BY id LIMIT 4)
                    UNION ALL (SELECT id FROM reports WHERE deployment_id = $2 ORDER BY id LIMIT 1))`,
      [a, b],
    );
    await expectExact(a, 17);
    await expectExact(b, 13);
    await t.sql(`UPDATE reports SET deployment_id = $2 WHERE deployment_id = $1`, [b, a]);
    await expectExact(a, 30);
    await expectExact(b, 0);
    // Setting the column to its own value, and other updates, change nothing.
    await t.sql(
      `UPDATE reports SET deployment_id = deployment_id, name = name || '.' WHERE deployment_id = $1`,
      [a],
    );
    await expectExact(a, 30);
    await t.sql(`DELETE FROM reports WHERE deployment_id = ANY($1::int[]) AND name LIKE 'Bulk 1%'`, [[a, b]]);
    await expectExact(a, 19);
  });

  it('counts a filtered list and a restricted reader with count(*)', async () => {
    const d = await newDeployment(t, t.admin, 'Filtered');
    const folder = await insertFolder(t, t.admin, d, 'Filed');
    const workbook = await insertWorkbook(t, t.admin, d, 'Booked');
    const filed = await newReport(t, t.admin, d, { name: 'Filed alpha', folderId: folder });
    await newReport(t, t.admin, d, { name: 'Booked alpha', workbookId: workbook });
    await newReport(t, t.admin, d, { name: 'Loose beta' });
    await insertReport(t, t.admin, d, { name: 'Legacy alpha' });
    await insertPlacement(t, t.admin.accountId, filed.id, {
      externalWorkbookId: 'xl-1',
      resultLocation: 'A1',
    });
    await expectExact(d, 4);
    const totals = async (query: Record<string, unknown>, actor?: Actor) => {
      const res = await list(d, query, actor);
      expect(res.status).toBe(200);
      expect(res.body.pagination.total).toBe(res.body.count);
      return res.body.count;
    };
    expect(await totals({ folderId: folder })).toBe(1);
    expect(await totals({ workbookId: workbook })).toBe(1);
    expect(await totals({ search: 'alpha' })).toBe(3);
    expect(await totals({ externalWorkbookId: 'xl-1' })).toBe(1);
    expect(await totals({ limit: 2, page: 2 })).toBe(4);

    // Unfiltered and account-wide, the total is the counter; any filter counts the rows.
    await t.sql(`UPDATE report_counts SET n = n + 1000 WHERE deployment_id = $1`, [d]);
    expect(await totals({})).toBe(1004);
    expect(await totals({ search: '' })).toBe(1004);
    expect(await totals({ search: 'a' })).toBe(4);
    await t.sql(`UPDATE report_counts SET n = n - 1000 WHERE deployment_id = $1`, [d]);

    const reader = await newUser(t, t.admin, { defaultRoles: [] });
    await grantRole(t, t.admin, reader, 'Reads the filed report', [
      { resourceType: 'Report', resources: [String(filed.id)], actions: ['ReportRead'] },
    ]);
    expect(await totals({}, reader)).toBe(1);
    const everyone = await newUser(t, t.admin, { defaultRoles: [] });
    await grantRole(t, t.admin, everyone, 'Reads every report', [
      { resourceType: 'Report', resources: ['All'], actions: ['ReportRead'] },
    ]);
    expect(await totals({}, everyone)).toBe(4);
  });

  it("answers 404 for another account's deployment and for one that does not exist", async () => {
    await newReport(t, globex, globexDep, { name: 'Globex report' });
    expect(await counter(globexDep)).toBe(1);
    for (const query of [{}, { search: 'x' }]) {
      for (const d of [globexDep, 999_999]) {
        const res = await list(d, query);
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('deployment_not_found');
      }
    }
    expect((await list(globexDep, {}, globex)).body.count).toBe(1);
  });

  it('drops the counter with its deployment', async () => {
    const d = await newDeployment(t, t.admin, 'Doomed deployment');
    await newReport(t, t.admin, d, { name: 'Doomed' });
    expect(await counter(d)).toBe(1);
    expect((await t.http().delete(`/api/v1/deployments/${d}`).set(as())).status).toBe(200);
    expect(await counter(d)).toBeNull();
    expect(await rows(d)).toBe(0);
  });

  it('backfills the counts when migrated, and rolls back cleanly', async () => {
    const migration = MIGRATIONS.find((m) => m.name === 'ReportCounts1764300000000')!;
    const runner = t.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      await new migration().down(runner);
      await insertReportIn(runner, dep, 'Before the counts');
      await new migration().up(runner);
      await runner.commitTransaction();
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
    await expectExact(dep);
    await expectExact(otherDep);
    expect(await counter(globexDep)).toBe(1);
    await newReport(t, t.admin, dep, { name: 'After the counts' });
    await expectExact(dep);
  });

  async function insertReportIn(
    runner: ReturnType<TestApp['dataSource']['createQueryRunner']>,
    d: number,
    name: string,
  ) {
    await runner.query(
      `INSERT INTO reports (account_id, deployment_id, name, user_id, created_by) VALUES ($1, $2, $3, $4, $4)`,
      [t.admin.accountId, d, name, t.admin.userId],
    );
  }

  describe('list pages serialised once', () => {
    it('answers the bytes, ETag and Content-Type of JSON.stringify, with the items serialised once', async () => {
      const paths = [
        `${reportsPath(dep)}?first=5`,
        `${reportsPath(dep)}?limit=3&page=2`,
        `${reportsPath(dep)}?search=${encodeURIComponent('zz no match')}`,
        '/api/v1/users',
        `/api/v1/deployments/${dep}/folders`,
      ];
      for (const path of paths) {
        const stringify = jest.spyOn(JSON, 'stringify');
        let once: request.Response;
        try {
          once = await t.http().get(path).set(as());
          // The page object itself is never handed to JSON.stringify; its items array once.
          expect(stringify.mock.calls.filter(([v]) => isPage(v))).toEqual([]);
          const holdingItems = stringify.mock.calls.filter(
            ([v]) =>
              typeof v === 'object' &&
              v !== null &&
              Object.values(v as object).some((x) => isItemsOf(x, once.body)),
          );
          expect(holdingItems).toHaveLength(1);
        } finally {
          stringify.mockRestore();
        }
        expect(once.status).toBe(200);
        expect(once.body.data).toEqual(once.body.items);
        // What Express sends for the text of JSON.stringify(page): same bytes, type, length, ETag
        // (strong, as the application sets it: conditional-requests.ts).
        const reference = express()
          .set('etag', 'strong')
          .get('/', (_req, res) => {
            res.type('json').send(JSON.stringify(once.body));
          });
        const expected = await request(reference).get('/');
        expect(once.text).toBe(expected.text);
        expect(once.headers['content-type']).toBe('application/json; charset=utf-8');
        expect(once.headers['content-length']).toBe(expected.headers['content-length']);
        expect(once.headers.etag).toBe(expected.headers.etag);
      }
    });

    it('answers 304 to If-None-Match and leaves other responses alone', async () => {
      const path = `${reportsPath(dep)}?first=2`;
      const first = await t.http().get(path).set(as());
      const again = await t.http().get(path).set(as()).set('If-None-Match', first.headers.etag);
      expect(again.status).toBe(304);
      const single = await t.http().get(`/api/v1/deployments/${dep}`).set(as());
      expect(single.status).toBe(200);
      expect(single.text).toBe(JSON.stringify(single.body));
      expect(single.headers['content-type']).toBe('application/json; charset=utf-8');
      const missing = await t.http().get(reportsPath(globexDep)).set(as());
      expect(missing.status).toBe(404);
      expect(missing.body.code).toBe('deployment_not_found');
    });
  });

  it('empties the counts when the reports are truncated (last: it empties the table)', async () => {
    expect(await counter(dep)).toBeGreaterThan(0);
    await t.sql(`TRUNCATE reports CASCADE`);
    await expectExact(dep, 0);
    expect(await t.sql(`SELECT * FROM report_counts`)).toEqual([]);
    await newReport(t, t.admin, dep, { name: 'After the truncate' });
    await expectExact(dep, 1);
  });
});

/** Whether `value` is an items array with the ids of the page `body` answered. */
function isItemsOf(value: unknown, body: { items?: Array<{ id?: unknown }> }): boolean {
  return (
    Array.isArray(value) &&
    Array.isArray(body.items) &&
    value.length === body.items.length &&
    value.every((v: { id?: unknown }, i) => v?.id === body.items![i].id)
  );
}

/** A legacy list page: `items` and the deprecated `data`. */
function isPage(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'items' in value && 'data' in value;
}
