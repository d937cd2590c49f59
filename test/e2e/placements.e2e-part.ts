import {
  bearer,
  expectErrorShape,
  newAccount,
  newUser,
  startApp,
  type Actor,
  type TestApp,
} from '../support/app.js';
import {
  grantRole,
  insertPlacement,
  newDeployment,
  newReport,
  reportsPath,
  type PlacementBody,
  type ReportBody,
} from '../support/reports.js';

const BAD_IDS = ['abc', '0'];

interface PlacementRow {
  row_id: string;
  placement_id: string | null;
  external_workbook_id: string;
  result_location: string;
  sheet_id: string | null;
  sheet_name: string | null;
  anchor_cell: string | null;
  end_result_cell: string | null;
  host: string | null;
  workbook_name: string | null;
  placed_at: Date | null;
  placed_by_user_id: number | null;
  refreshed_at: Date | null;
  refreshed_by_user_id: number | null;
}

type Body = Record<string, unknown>;

/** `wb|sheet|anchor` of a placement, to compare sets of spots. */
const spotKey = (p: { workbookId: string; sheetName: string | null; anchorCell: string | null }) =>
  `${p.workbookId}|${p.sheetName}|${p.anchorCell}`;

describe('report placements (connect, disconnect, refresh)', () => {
  let t: TestApp;
  let deploymentId: number;
  let otherDeploymentId: number;
  let otherDeploymentReport: ReportBody;
  let viewer: Actor;
  let noRole: Actor;
  let globex: Actor;
  let globexDeploymentId: number;
  let globexReport: ReportBody;

  beforeAll(async () => {
    t = await startApp();
    deploymentId = await newDeployment(t, t.admin, 'Placements');
    otherDeploymentId = await newDeployment(t, t.admin, 'Placements elsewhere');
    otherDeploymentReport = await newReport(t, t.admin, otherDeploymentId, { name: 'Elsewhere' });
    viewer = await newUser(t, t.admin, { defaultRoles: ['Viewer'], firstName: 'Vera' });
    noRole = await newUser(t, t.admin, { defaultRoles: [] });
    globex = await newAccount(t, 'globex');
    globexDeploymentId = await newDeployment(t, globex, 'Globex');
    globexReport = await newReport(t, globex, globexDeploymentId, { name: 'Globex report' });
    const placed = await t
      .http()
      .put(reportsPath(globexDeploymentId, `/${globexReport.id}/connect-workbook`))
      .set(bearer(globex.token))
      .send({ externalWorkbookId: 'globex-wb', resultLocation: 'Sheet1!B3' });
    if (placed.status !== 200) throw new Error(`could not place: ${placed.status}`);
  });
  afterAll(() => t.close());

  const connect = (
    reportId: number,
    body: unknown,
    actor: Actor = t.admin,
    dep: number | string = deploymentId,
  ) =>
    t
      .http()
      .put(reportsPath(dep, `/${reportId}/connect-workbook`))
      .set(bearer(actor.token))
      .send(body as Body);

  const disconnect = (
    reportId: number | string,
    body?: unknown,
    actor: Actor = t.admin,
    dep: number | string = deploymentId,
  ) => {
    const req = t
      .http()
      .delete(reportsPath(dep, `/${reportId}/connect-workbook`))
      .set(bearer(actor.token));
    return body === undefined ? req : req.send(body as Body);
  };

  const refresh = (
    reportId: number | string,
    body?: unknown,
    actor: Actor = t.admin,
    dep: number | string = deploymentId,
  ) => {
    const req = t
      .http()
      .put(reportsPath(dep, `/${reportId}/refresh`))
      .set(bearer(actor.token));
    return body === undefined ? req : req.send(body as Body);
  };

  const placementRows = (reportId: number) =>
    t.sql<PlacementRow>(
      `SELECT row_id, placement_id, external_workbook_id, result_location, sheet_id, sheet_name, anchor_cell,
         end_result_cell, host, workbook_name, placed_at, placed_by_user_id, refreshed_at, refreshed_by_user_id
       FROM report_placements WHERE report_id = $1 ORDER BY row_id`,
      [reportId],
    );

  const reportRow = async (reportId: number) =>
    (await t.sql<Record<string, unknown>>(`SELECT * FROM reports WHERE id = $1`, [reportId]))[0];

  const getReport = async (reportId: number, actor: Actor = t.admin): Promise<ReportBody> => {
    const res = await t
      .http()
      .get(reportsPath(deploymentId, `/${reportId}`))
      .set(bearer(actor.token));
    expect(res.status).toBe(200);
    return res.body;
  };

  let reportCounter = 0;
  const freshReport = () =>
    newReport(t, t.admin, deploymentId, {
      name: `Placed report ${++reportCounter}`,
      description: 'Revenue by month',
      jsonQuery: '{"measures":["orders.revenue"]}',
      sqlQuery: 'SELECT 1',
      meta: { chart: 'bar' },
    });

  /** A connect body: spreadsheet `wb-1`, sheet id `s1`; override anything. */
  const spot = (overrides: Body = {}): Body => ({
    externalWorkbookId: 'wb-1',
    resultLocation: 'Sheet1!B3',
    sheetId: 's1',
    host: 'GOOGLE_SHEETS',
    ...overrides,
  });

  /** Connects every body in turn (as admin) and answers the report's placements afterwards. */
  async function place(reportId: number, ...bodies: Body[]): Promise<PlacementBody[]> {
    let last: ReportBody | undefined;
    for (const body of bodies) {
      const res = await connect(reportId, body);
      if (res.status !== 200) throw new Error(`connect failed: ${res.status} ${JSON.stringify(res.body)}`);
      last = res.body;
    }
    return last?.externalWorkbookPlacements ?? [];
  }

  /** Sends `call`, expects 200, and checks that neither the placements nor the report row changed. */
  async function expectNoChange(
    reportId: number,
    call: () => PromiseLike<{ status: number; body: unknown }>,
  ) {
    const rowsBefore = await placementRows(reportId);
    const reportBefore = await reportRow(reportId);
    const res = await call();
    expect(res.status).toBe(200);
    expect((res.body as ReportBody).externalWorkbookPlacements!.map(spotKey)).toEqual(
      rowsBefore.map((r) =>
        spotKey({ workbookId: r.external_workbook_id, sheetName: r.sheet_name, anchorCell: r.anchor_cell }),
      ),
    );
    expect(await placementRows(reportId)).toEqual(rowsBefore);
    expect(await reportRow(reportId)).toEqual(reportBefore);
    return res;
  }

  describe('DELETE .../connect-workbook (disconnect)', () => {
    it('rule 1: removes exactly one placement; the others in the same and in other spreadsheets stay', async () => {
      const r = await freshReport();
      await place(
        r.id,
        spot({ resultLocation: 'Sheet1!A1' }),
        spot({ resultLocation: 'Sheet1!B3' }),
        spot({ resultLocation: 'Sheet2!B3', sheetId: 's2' }),
        spot({ externalWorkbookId: 'wb-2', resultLocation: 'Sheet1!B3', sheetId: 'x1' }),
      );
      const before = await placementRows(r.id);
      expect(before).toHaveLength(4);

      const res = await disconnect(r.id, {
        externalWorkbookId: 'wb-1',
        sheetName: 'Sheet1',
        anchorCell: 'B3',
      });
      expect(res.status).toBe(200);
      const remaining = before.filter(
        (p) => !(p.external_workbook_id === 'wb-1' && p.result_location === 'Sheet1!B3'),
      );
      expect(remaining).toHaveLength(3);
      expect(await placementRows(r.id)).toEqual(remaining);
      expect((res.body as ReportBody).externalWorkbookPlacements!.map((p) => p.id)).toEqual(
        remaining.map((p) => p.placement_id),
      );
    });

    it('rule 1: removes only one even when older rows duplicate the same spot', async () => {
      const r = await freshReport();
      await insertPlacement(t, t.admin.accountId, r.id, {
        externalWorkbookId: 'wb-dup',
        resultLocation: 'Sheet1!B3',
        placedAt: '2024-01-01T00:00:00Z',
      });
      await insertPlacement(t, t.admin.accountId, r.id, {
        externalWorkbookId: 'wb-dup',
        resultLocation: 'Sheet1!$b$3',
        placedAt: '2024-02-01T00:00:00Z',
      });
      const res = await disconnect(r.id, { externalWorkbookId: 'wb-dup', resultLocation: 'Sheet1!B3' });
      expect(res.status).toBe(200);
      const rows = await placementRows(r.id);
      expect(rows).toHaveLength(1);
      expect(res.body.externalWorkbookPlacements).toHaveLength(1);
    });

    it('rule 2: addresses a placement by placementId', async () => {
      const r = await freshReport();
      const placed = await place(
        r.id,
        spot({ resultLocation: 'Sheet1!A1' }),
        spot({ resultLocation: 'Sheet1!A2' }),
      );
      const res = await disconnect(r.id, { placementId: placed[1].id });
      expect(res.status).toBe(200);
      expect(res.body.externalWorkbookPlacements.map((p: PlacementBody) => p.id)).toEqual([placed[0].id]);
      expect((await placementRows(r.id)).map((p) => p.placement_id)).toEqual([placed[0].id]);
    });

    it('rule 2: addresses a placement by externalWorkbookId + sheetName + anchorCell (anchor as $b$3)', async () => {
      const r = await freshReport();
      const placed = await place(
        r.id,
        spot({ resultLocation: 'Sheet1!B3' }),
        spot({ resultLocation: 'Sheet1!C3' }),
      );
      const res = await disconnect(r.id, {
        externalWorkbookId: 'wb-1',
        sheetName: 'Sheet1',
        anchorCell: '$b$3',
      });
      expect(res.status).toBe(200);
      expect((await placementRows(r.id)).map((p) => p.placement_id)).toEqual([placed[1].id]);
    });

    it('rule 2: addresses a placement by externalWorkbookId + a resultLocation naming sheet and anchor', async () => {
      const r = await freshReport();
      const placed = await place(
        r.id,
        spot({ resultLocation: "'Sales data'!C5:F9" }),
        spot({ resultLocation: "'Sales data'!C6" }),
      );
      const res = await disconnect(r.id, { externalWorkbookId: 'wb-1', resultLocation: "'Sales data'!$c$5" });
      expect(res.status).toBe(200);
      expect((await placementRows(r.id)).map((p) => p.placement_id)).toEqual([placed[1].id]);
    });

    it("rule 2: a placementId of another report's placement addresses nothing here", async () => {
      const a = await freshReport();
      const b = await freshReport();
      const [theirs] = await place(b.id, spot());
      await place(a.id, spot());
      await expectNoChange(a.id, () => disconnect(a.id, { placementId: theirs.id }));
      expect(await placementRows(b.id)).toHaveLength(1);
    });

    describe('rule 3: in the name-based form, sheetName and anchor are both required', () => {
      let r: ReportBody;
      beforeAll(async () => {
        r = await freshReport();
        await place(r.id, spot({ resultLocation: 'Sheet1!B3' }));
      });

      it.each<[string, Body]>([
        ['without sheetName', { externalWorkbookId: 'wb-1', anchorCell: 'B3' }],
        ['without the anchor', { externalWorkbookId: 'wb-1', sheetName: 'Sheet1' }],
        ['with a resultLocation that names no sheet', { externalWorkbookId: 'wb-1', resultLocation: 'B3' }],
        ['without externalWorkbookId', { sheetName: 'Sheet1', anchorCell: 'B3' }],
        [
          'with nulls for sheetName and anchor',
          { externalWorkbookId: 'wb-1', sheetName: null, anchorCell: null },
        ],
        ['with empty strings', { externalWorkbookId: 'wb-1', sheetName: '', anchorCell: '' }],
        [
          'with sheetName disagreeing with resultLocation',
          { externalWorkbookId: 'wb-1', sheetName: 'Sheet2', resultLocation: 'Sheet1!B3' },
        ],
      ])('rule 3: a target %s matches nothing (200, unchanged)', async (_label, body) => {
        await expectNoChange(r.id, () => disconnect(r.id, body));
      });

      it('rule 3: matching is by sheet plus anchor: another sheet or another anchor is not matched', async () => {
        await expectNoChange(r.id, () =>
          disconnect(r.id, { externalWorkbookId: 'wb-1', sheetName: 'Sheet2', anchorCell: 'B3' }),
        );
        await expectNoChange(r.id, () =>
          disconnect(r.id, { externalWorkbookId: 'wb-1', sheetName: 'Sheet1', anchorCell: 'B4' }),
        );
        await expectNoChange(r.id, () =>
          disconnect(r.id, { externalWorkbookId: 'wb-2', sheetName: 'Sheet1', anchorCell: 'B3' }),
        );
      });

      it('rule 3: sheet names compare exactly (sheet1 is not Sheet1)', async () => {
        await expectNoChange(r.id, () =>
          disconnect(r.id, { externalWorkbookId: 'wb-1', sheetName: 'sheet1', anchorCell: 'B3' }),
        );
      });
    });

    describe('rule 4: sheetId does not replace sheetName', () => {
      it('rule 4: an id-only address (sheetId without sheetName) matches nothing', async () => {
        const r = await freshReport();
        await place(r.id, spot({ sheetId: 's1' }));
        await expectNoChange(r.id, () => disconnect(r.id, { sheetId: 's1' }));
        await expectNoChange(r.id, () => disconnect(r.id, { externalWorkbookId: 'wb-1', sheetId: 's1' }));
        await expectNoChange(r.id, () =>
          disconnect(r.id, { externalWorkbookId: 'wb-1', sheetId: 's1', anchorCell: 'B3' }),
        );
      });

      it('rule 4: a placement written before sheetId existed is not matched by an id-only address', async () => {
        const r = await freshReport();
        await insertPlacement(t, t.admin.accountId, r.id, {
          externalWorkbookId: 'wb-1',
          resultLocation: 'Sheet1!B3',
          sheetName: 'Sheet1',
          anchorCell: 'B3',
        });
        await expectNoChange(r.id, () =>
          disconnect(r.id, { externalWorkbookId: 'wb-1', sheetId: 's1', anchorCell: 'B3' }),
        );
      });
    });

    describe('rule 5: a sent sheetId narrows', () => {
      it('rule 5: a placement stored under a different sheet id is not matched even if name and anchor agree', async () => {
        const r = await freshReport();
        await place(r.id, spot({ sheetId: 's1' }));
        const body = { externalWorkbookId: 'wb-1', sheetName: 'Sheet1', anchorCell: 'B3' };
        await expectNoChange(r.id, () => disconnect(r.id, { ...body, sheetId: 's2' }));
        await expectNoChange(r.id, () =>
          disconnect(r.id, { externalWorkbookId: 'wb-1', resultLocation: 'Sheet1!B3', sheetId: 's2' }),
        );
        const res = await disconnect(r.id, { ...body, sheetId: 's1' });
        expect(res.status).toBe(200);
        expect(await placementRows(r.id)).toHaveLength(0);
      });

      it('rule 5: sheetId narrows an address by placementId too', async () => {
        const r = await freshReport();
        const [p] = await place(r.id, spot({ sheetId: 's1' }));
        await expectNoChange(r.id, () => disconnect(r.id, { placementId: p.id, sheetId: 's2' }));
        expect((await disconnect(r.id, { placementId: p.id, sheetId: 's1' })).status).toBe(200);
        expect(await placementRows(r.id)).toHaveLength(0);
      });

      it('decision: sheetId sent against a placement stored without a sheet id matches by name and anchor', async () => {
        const r = await freshReport();
        await insertPlacement(t, t.admin.accountId, r.id, {
          placementId: 'old-1',
          externalWorkbookId: 'wb-1',
          resultLocation: 'Sheet1!B3',
          sheetName: 'Sheet1',
          anchorCell: 'B3',
        });
        const res = await disconnect(r.id, {
          externalWorkbookId: 'wb-1',
          sheetName: 'Sheet1',
          anchorCell: 'B3',
          sheetId: 'brand-new-sheet-id',
        });
        expect(res.status).toBe(200);
        expect(res.body.externalWorkbookPlacements).toEqual([]);
        expect(await placementRows(r.id)).toHaveLength(0);
      });
    });

    it('rule 6: after a tab is recreated (new sheet id), addressing by placementId or by name without sheetId works', async () => {
      const r = await freshReport();
      const [a, b, c] = await place(
        r.id,
        spot({ resultLocation: 'Sheet1!B3', sheetId: 'old-tab' }),
        spot({ resultLocation: 'Sheet1!C3', sheetId: 'old-tab' }),
        spot({ resultLocation: 'Sheet1!D3', sheetId: 'old-tab' }),
      );
      // The add-in now sees the tab under a new id: with it, the old placements are not matched (rule 5) ...
      await expectNoChange(r.id, () =>
        disconnect(r.id, {
          externalWorkbookId: 'wb-1',
          sheetName: 'Sheet1',
          anchorCell: 'B3',
          sheetId: 'new-tab',
        }),
      );
      // ... by placementId, or by name without sheetId, they are.
      expect((await disconnect(r.id, { placementId: a.id })).status).toBe(200);
      expect(
        (await disconnect(r.id, { externalWorkbookId: 'wb-1', sheetName: 'Sheet1', anchorCell: 'C3' }))
          .status,
      ).toBe(200);
      expect((await placementRows(r.id)).map((p) => p.placement_id)).toEqual([c.id]);
      expect(b.id).not.toBe(c.id);
      const refreshed = await refresh(r.id, { externalWorkbookId: 'wb-1', resultLocation: 'Sheet1!D3' });
      expect(refreshed.status).toBe(200);
      expect((await placementRows(r.id))[0].refreshed_at).toBeInstanceOf(Date);
    });

    describe('rule 7: a target that matches nothing answers 200 and changes nothing', () => {
      it('rule 7: no match → 200 with the report, nothing changed; retrying is safe', async () => {
        const r = await freshReport();
        await place(r.id, spot());
        const before = await getReport(r.id);
        const body = { externalWorkbookId: 'wb-1', sheetName: 'Sheet1', anchorCell: 'Z99' };
        const first = await expectNoChange(r.id, () => disconnect(r.id, body));
        const second = await expectNoChange(r.id, () => disconnect(r.id, body));
        expect(first.body).toEqual(before);
        expect(second.body).toEqual(before);
      });

      it('rule 7: repeating a disconnect that succeeded is a no-op 200', async () => {
        const r = await freshReport();
        const [p, q] = await place(
          r.id,
          spot({ resultLocation: 'Sheet1!A1' }),
          spot({ resultLocation: 'Sheet1!A2' }),
        );
        expect((await disconnect(r.id, { placementId: p.id })).status).toBe(200);
        await expectNoChange(r.id, () => disconnect(r.id, { placementId: p.id }));
        expect((await placementRows(r.id)).map((x) => x.placement_id)).toEqual([q.id]);
      });

      it('rule 7: no body at all, or an empty body, matches nothing', async () => {
        const r = await freshReport();
        await place(r.id, spot());
        await expectNoChange(r.id, () => disconnect(r.id));
        await expectNoChange(r.id, () => disconnect(r.id, {}));
        await expectNoChange(r.id, () => disconnect(r.id, { placementId: null, externalWorkbookId: null }));
        await expectNoChange(r.id, () => disconnect(r.id, { placementId: 'does-not-exist' }));
      });

      it('rule 7: a report without placements answers 200', async () => {
        const r = await freshReport();
        const res = await expectNoChange(r.id, () => disconnect(r.id, { placementId: 'x' }));
        expect((res.body as ReportBody).externalWorkbookPlacements).toEqual([]);
      });
    });

    describe('rule 8: needs only read access and records nothing about the definition', () => {
      it('rule 8: a Viewer (read only) disconnects', async () => {
        const r = await freshReport();
        const [p, q] = await place(
          r.id,
          spot({ resultLocation: 'Sheet1!A1' }),
          spot({ resultLocation: 'Sheet1!A2' }),
        );
        const res = await disconnect(r.id, { placementId: p.id }, viewer);
        expect(res.status).toBe(200);
        expect(res.body.canEdit).toBe(false);
        expect((await placementRows(r.id)).map((x) => x.placement_id)).toEqual([q.id]);
      });

      it('rule 8: a user granted only ReportRead on this one report connects, refreshes and disconnects', async () => {
        const r = await freshReport();
        const other = await freshReport();
        const reader = await newUser(t, t.admin, { defaultRoles: [] });
        await grantRole(t, t.admin, reader, 'Reads one placed report', [
          { resourceType: 'Report', resources: [String(r.id)], actions: ['ReportRead'] },
        ]);
        const connected = await connect(r.id, spot(), reader);
        expect(connected.status).toBe(200);
        expect(connected.body.externalWorkbookPlacements[0].placedByUserId).toBe(reader.userId);
        expect(
          (await refresh(r.id, { placementId: connected.body.externalWorkbookPlacements[0].id }, reader))
            .status,
        ).toBe(200);
        expect((await placementRows(r.id))[0].refreshed_by_user_id).toBe(reader.userId);
        const gone = await disconnect(
          r.id,
          { externalWorkbookId: 'wb-1', resultLocation: 'Sheet1!B3' },
          reader,
        );
        expect(gone.status).toBe(200);
        expect(await placementRows(r.id)).toHaveLength(0);

        // Any other report is invisible to them: 404, and nothing is written.
        for (const res of [
          await connect(other.id, spot(), reader),
          await disconnect(other.id, { placementId: 'x' }, reader),
          await refresh(other.id, { placementId: 'x' }, reader),
        ]) {
          expect(res.status).toBe(404);
          expectErrorShape(res.body, 404, 'report_not_found');
        }
        expect(await placementRows(other.id)).toHaveLength(0);
      });

      it('rule 8: a user with no role at all gets 403 and nothing changes', async () => {
        const r = await freshReport();
        const [p] = await place(r.id, spot());
        const before = await placementRows(r.id);
        for (const res of [
          await connect(r.id, spot({ resultLocation: 'Sheet1!Z1' }), noRole),
          await disconnect(r.id, { placementId: p.id }, noRole),
          await refresh(r.id, { placementId: p.id }, noRole),
        ]) {
          expect(res.status).toBe(403);
          expectErrorShape(res.body, 403, 'forbidden');
        }
        expect(await placementRows(r.id)).toEqual(before);
      });

      it('rule 8 / decision: connect, refresh and disconnect leave the definition, version and updatedAt alone', async () => {
        const r = await freshReport();
        const edited = await t
          .http()
          .put(reportsPath(deploymentId, `/${r.id}`))
          .set(bearer(t.admin.token))
          .send({ title: 'Edited once' });
        expect(edited.status).toBe(200);
        expect(edited.body.version).toBe(2);
        const row = await reportRow(r.id);
        const api = await getReport(r.id);

        const connected = await connect(r.id, spot(), viewer);
        expect(connected.status).toBe(200);
        expect(await reportRow(r.id)).toEqual(row);
        expect(connected.body.version).toBe(api.version);
        expect(connected.body.updatedAt).toBe(api.updatedAt);

        const placementId = connected.body.externalWorkbookPlacements[0].id;
        const refreshed = await refresh(r.id, { placementId }, viewer);
        expect(refreshed.status).toBe(200);
        expect(await reportRow(r.id)).toEqual({ ...row, refreshed_by: viewer.userId });
        expect(refreshed.body.version).toBe(api.version);
        expect(refreshed.body.updatedAt).toBe(api.updatedAt);

        const disconnected = await disconnect(r.id, { placementId }, viewer);
        expect(disconnected.status).toBe(200);
        expect(await reportRow(r.id)).toEqual({ ...row, refreshed_by: viewer.userId });
        expect(disconnected.body.version).toBe(api.version);
        expect(disconnected.body.updatedAt).toBe(api.updatedAt);
        for (const field of [
          'name',
          'title',
          'description',
          'jsonQuery',
          'sqlQuery',
          'meta',
          'pivotItems',
          'publicId',
        ]) {
          expect(disconnected.body[field]).toEqual(api[field]);
        }
      });
    });
  });

  describe('placements recorded before ids or sheet ids existed', () => {
    let r: ReportBody;
    let withColumns: string;
    let locationOnly: string;

    beforeEach(async () => {
      r = await freshReport();
      withColumns = await insertPlacement(t, t.admin.accountId, r.id, {
        externalWorkbookId: 'legacy-wb',
        resultLocation: 'Sheet1!B3',
        sheetName: 'Sheet1',
        anchorCell: 'B3',
        placedAt: '2024-01-01T00:00:00Z',
      });
      locationOnly = await insertPlacement(t, t.admin.accountId, r.id, {
        externalWorkbookId: 'legacy-wb',
        resultLocation: "'Sheet 1'!$b$3",
        placedAt: '2024-02-01T00:00:00Z',
      });
    });

    it('are listed with id null and sheetId null', async () => {
      const report = await getReport(r.id);
      expect(report.externalWorkbookPlacements).toEqual([
        {
          id: null,
          workbookId: 'legacy-wb',
          resultLocation: 'Sheet1!B3',
          anchorCell: 'B3',
          endResultCell: null,
          host: null,
          sheetId: null,
          sheetName: 'Sheet1',
          workbookName: null,
          placedAt: '2024-01-01T00:00:00.000Z',
          placedByUserId: null,
          refreshedAt: null,
          refreshedByUserId: null,
        },
        expect.objectContaining({
          id: null,
          sheetId: null,
          sheetName: null,
          anchorCell: null,
          resultLocation: "'Sheet 1'!$b$3",
        }),
      ]);
      // The legacy single-placement fields describe the most recently placed one.
      expect(report.externalWorkbookId).toBe('legacy-wb');
      expect(report.resultLocation).toBe("'Sheet 1'!$b$3");
    });

    it('disconnect by name reaches a row that holds only a result location', async () => {
      const res = await disconnect(r.id, {
        externalWorkbookId: 'legacy-wb',
        sheetName: 'Sheet 1',
        anchorCell: 'b3',
      });
      expect(res.status).toBe(200);
      expect((await placementRows(r.id)).map((p) => p.row_id)).toEqual([withColumns]);
    });

    it('disconnect by resultLocation reaches a row with sheet name and anchor columns', async () => {
      const res = await disconnect(r.id, { externalWorkbookId: 'legacy-wb', resultLocation: 'Sheet1!$B$3' });
      expect(res.status).toBe(200);
      expect((await placementRows(r.id)).map((p) => p.row_id)).toEqual([locationOnly]);
    });

    it('rule 4 holds on them: an id-only address matches nothing', async () => {
      await expectNoChange(r.id, () => disconnect(r.id, { sheetId: 'anything' }));
      await expectNoChange(r.id, () =>
        disconnect(r.id, { externalWorkbookId: 'legacy-wb', sheetId: 'anything', anchorCell: 'B3' }),
      );
    });

    it('rule 5 / decision holds on them: a sent sheetId does not exclude them', async () => {
      const res = await disconnect(r.id, {
        externalWorkbookId: 'legacy-wb',
        resultLocation: "'Sheet 1'!B3",
        sheetId: 'tab-42',
      });
      expect(res.status).toBe(200);
      expect((await placementRows(r.id)).map((p) => p.row_id)).toEqual([withColumns]);
    });

    it('refresh by name records the refresh on that row only', async () => {
      const res = await refresh(
        r.id,
        { externalWorkbookId: 'legacy-wb', sheetName: 'Sheet 1', anchorCell: 'B3' },
        viewer,
      );
      expect(res.status).toBe(200);
      const rows = await placementRows(r.id);
      expect(rows.find((p) => p.row_id === locationOnly)).toMatchObject({
        refreshed_by_user_id: viewer.userId,
      });
      expect(rows.find((p) => p.row_id === withColumns)).toMatchObject({
        refreshed_at: null,
        refreshed_by_user_id: null,
      });
    });

    it('connect to the same spot updates that row (no new row) and gives it an id', async () => {
      const res = await connect(r.id, {
        externalWorkbookId: 'legacy-wb',
        resultLocation: "'Sheet 1'!B3:D9",
        sheetId: 'tab-7',
        host: 'EXCEL',
      });
      expect(res.status).toBe(200);
      const rows = await placementRows(r.id);
      expect(rows.map((p) => p.row_id)).toEqual([withColumns, locationOnly]);
      const updated = rows[1];
      expect(updated).toMatchObject({
        sheet_id: 'tab-7',
        sheet_name: 'Sheet 1',
        anchor_cell: 'B3',
        end_result_cell: 'D9',
        host: 'EXCEL',
        placed_by_user_id: t.admin.userId,
      });
      expect(updated.placement_id).toEqual(expect.any(String));
      expect(rows[0].placement_id).toBeNull();
      expect(res.body.externalWorkbookPlacements[1].id).toBe(updated.placement_id);
    });
  });

  describe('PUT .../connect-workbook (connect)', () => {
    it('records a new placement with a new id and every field', async () => {
      const r = await freshReport();
      const res = await connect(
        r.id,
        spot({ resultLocation: 'Data!a1:d20', workbookName: 'Budget 2025', host: 'EXCEL', sheetId: 'tab-1' }),
        viewer,
      );
      expect(res.status).toBe(200);
      const [p] = res.body.externalWorkbookPlacements as PlacementBody[];
      expect(p).toEqual({
        id: expect.any(String),
        workbookId: 'wb-1',
        resultLocation: 'Data!a1:d20',
        anchorCell: 'A1',
        endResultCell: 'D20',
        host: 'EXCEL',
        sheetId: 'tab-1',
        sheetName: 'Data',
        workbookName: 'Budget 2025',
        placedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        placedByUserId: viewer.userId,
        refreshedAt: null,
        refreshedByUserId: null,
      });
      expect(p.id!.length).toBeGreaterThan(0);
      expect(res.body.externalWorkbookId).toBe('wb-1');
      expect(res.body.resultLocation).toBe('Data!a1:d20');
      expect(res.body.endResultCell).toBe('D20');
      const [row] = await placementRows(r.id);
      expect(row.placement_id).toBe(p.id);
    });

    it('gives each new spot its own non-null id', async () => {
      const r = await freshReport();
      const placed = await place(
        r.id,
        spot({ resultLocation: 'Sheet1!A1' }),
        spot({ resultLocation: 'Sheet1!A2' }),
        spot({ externalWorkbookId: 'wb-2', resultLocation: 'Sheet1!A1' }),
      );
      const ids = placed.map((p) => p.id);
      expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
      expect(new Set(ids).size).toBe(3);
    });

    it('keeps a placementId chosen by the client for a new spot', async () => {
      const r = await freshReport();
      const [p] = await place(r.id, spot({ placementId: 'client-chosen-1' }));
      expect(p.id).toBe('client-chosen-1');
    });

    it('is an upsert: the same spreadsheet, sheet and anchor ($b$3 vs B3) updates instead of adding', async () => {
      const r = await freshReport();
      const [first] = await place(r.id, spot({ resultLocation: 'Sheet1!B3', workbookName: 'Old name' }));
      const res = await connect(
        r.id,
        spot({ resultLocation: 'Sheet1!$b$3:$c$9', workbookName: 'New name', host: 'EXCEL' }),
        viewer,
      );
      expect(res.status).toBe(200);
      expect(res.body.externalWorkbookPlacements).toHaveLength(1);
      expect(res.body.externalWorkbookPlacements[0]).toMatchObject({
        id: first.id,
        resultLocation: 'Sheet1!$b$3:$c$9',
        anchorCell: 'B3',
        endResultCell: 'C9',
        workbookName: 'New name',
        host: 'EXCEL',
        placedByUserId: viewer.userId,
      });
      const again = await connect(r.id, {
        externalWorkbookId: 'wb-1',
        resultLocation: 'b3',
        sheetName: 'Sheet1',
        anchorCell: 'B3',
      });
      expect(again.status).toBe(200);
      expect(again.body.externalWorkbookPlacements.map((p: PlacementBody) => p.id)).toEqual([first.id]);
      expect(await placementRows(r.id)).toHaveLength(1);
    });

    it('is an upsert: the same placementId updates that placement (moves it)', async () => {
      const r = await freshReport();
      const [p, q] = await place(
        r.id,
        spot({ resultLocation: 'Sheet1!B3' }),
        spot({ resultLocation: 'Sheet1!Z1' }),
      );
      const res = await connect(r.id, spot({ placementId: p.id, resultLocation: 'Sheet1!D10' }));
      expect(res.status).toBe(200);
      const rows = await placementRows(r.id);
      expect(rows.map((x) => [x.placement_id, x.anchor_cell])).toEqual([
        [p.id, 'D10'],
        [q.id, 'Z1'],
      ]);
    });

    it('is an upsert: the same placementId updates even after the tab was recreated under a new sheet id', async () => {
      const r = await freshReport();
      const [p] = await place(r.id, spot({ resultLocation: 'Sheet1!B3', sheetId: 'old-tab' }));
      const res = await connect(
        r.id,
        spot({ placementId: p.id, resultLocation: 'Sheet1!B3', sheetId: 'new-tab' }),
      );
      expect(res.status).toBe(200);
      const rows = await placementRows(r.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ placement_id: p.id, sheet_id: 'new-tab', anchor_cell: 'B3' });
    });

    it('fills in the sheet id of a placement stored without one', async () => {
      const r = await freshReport();
      await insertPlacement(t, t.admin.accountId, r.id, {
        placementId: 'pre-sheet-ids',
        externalWorkbookId: 'wb-1',
        resultLocation: 'Sheet1!B3',
        sheetName: 'Sheet1',
        anchorCell: 'B3',
      });
      const res = await connect(r.id, spot({ sheetId: 'tab-3' }));
      expect(res.status).toBe(200);
      const rows = await placementRows(r.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ placement_id: 'pre-sheet-ids', sheet_id: 'tab-3' });
    });

    it('compares sheet names exactly: sheet1 and Sheet1 are two spots', async () => {
      const r = await freshReport();
      const placed = await place(
        r.id,
        spot({ resultLocation: 'Sheet1!B3' }),
        spot({ resultLocation: 'sheet1!B3' }),
      );
      expect(placed.map((p) => p.sheetName)).toEqual(['Sheet1', 'sheet1']);
      expect(new Set(placed.map((p) => p.id)).size).toBe(2);
    });

    it('the same sheet and anchor in another spreadsheet is another spot', async () => {
      const r = await freshReport();
      const placed = await place(r.id, spot(), spot({ externalWorkbookId: 'wb-2', sheetId: 'other' }));
      expect(placed.map((p) => p.workbookId)).toEqual(['wb-1', 'wb-2']);
    });

    it("reads quoted sheet names with doubled quotes ('It''s here'!A1)", async () => {
      const r = await freshReport();
      const [p] = await place(r.id, spot({ resultLocation: "'It''s here'!a1" }));
      expect(p).toMatchObject({
        sheetName: "It's here",
        anchorCell: 'A1',
        resultLocation: "'It''s here'!a1",
      });
      const res = await disconnect(r.id, {
        externalWorkbookId: 'wb-1',
        sheetName: "It's here",
        anchorCell: 'A1',
      });
      expect(res.status).toBe(200);
      expect(await placementRows(r.id)).toHaveLength(0);
    });

    it('takes the first cell of a range as the anchor (Sheet!A1:D20 → A1)', async () => {
      const r = await freshReport();
      const [p] = await place(r.id, spot({ resultLocation: 'Sheet!A1:D20' }));
      expect(p).toMatchObject({ sheetName: 'Sheet', anchorCell: 'A1', endResultCell: 'D20' });
      const [same] = await place(r.id, spot({ resultLocation: 'Sheet!$A$1' }));
      expect(same.id).toBe(p.id);
    });

    it('accepts sheetName and anchorCell that agree with the location', async () => {
      const r = await freshReport();
      const [p] = await place(
        r.id,
        spot({
          resultLocation: "'Q1 data'!C3",
          sheetName: 'Q1 data',
          anchorCell: '$c$3',
          endResultCell: 'e9',
        }),
      );
      expect(p).toMatchObject({ sheetName: 'Q1 data', anchorCell: 'C3', endResultCell: 'E9' });
    });

    it.each([
      'Sheet1',
      'Sheet1!',
      '!A1',
      'Sheet1!A0',
      'Sheet1!XFE1',
      'Sheet1!A1:B2:C3',
      "'Open quote!A1",
      'Sheet1!R1C1',
      'B3',
    ])('answers 400 invalid_location for resultLocation %j and stores nothing', async (resultLocation) => {
      const r = await freshReport();
      const res = await connect(r.id, { externalWorkbookId: 'wb-1', resultLocation });
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_location');
      expect(await placementRows(r.id)).toHaveLength(0);
    });

    it.each<[string, Body]>([
      ['an invalid anchorCell', { anchorCell: 'ZZZZ1' }],
      ['an invalid endResultCell', { endResultCell: 'A0' }],
    ])('answers 400 invalid_location for %s', async (_label, extra) => {
      const r = await freshReport();
      const res = await connect(r.id, spot(extra));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'invalid_location');
      expect(await placementRows(r.id)).toHaveLength(0);
    });

    it.each<[string, Body]>([
      ['sheetName naming another sheet', { sheetName: 'Sheet2' }],
      ['sheetName differing only in case', { sheetName: 'sheet1' }],
      ['anchorCell naming another cell', { anchorCell: 'C3' }],
    ])('answers 400 location_mismatch for %s than resultLocation', async (_label, extra) => {
      const r = await freshReport();
      const res = await connect(r.id, spot({ resultLocation: 'Sheet1!B3', ...extra }));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'location_mismatch');
      expect(await placementRows(r.id)).toHaveLength(0);
    });

    it('legacy fields describe the most recently placed remaining placement, or are null when none remains', async () => {
      const r = await freshReport();
      const expectLegacy = (body: ReportBody, wb: string | null, loc: string | null, end: string | null) =>
        expect([body.externalWorkbookId, body.resultLocation, body.endResultCell]).toEqual([wb, loc, end]);

      expectLegacy(r, null, null, null);
      const a = await connect(r.id, spot({ externalWorkbookId: 'wb-a', resultLocation: 'Sheet1!A1:C3' }));
      expectLegacy(a.body, 'wb-a', 'Sheet1!A1:C3', 'C3');
      const b = await connect(r.id, spot({ externalWorkbookId: 'wb-b', resultLocation: "'Sheet 2'!B2" }));
      expectLegacy(b.body, 'wb-b', "'Sheet 2'!B2", null);
      const aAgain = await connect(
        r.id,
        spot({ externalWorkbookId: 'wb-a', resultLocation: 'Sheet1!A1:C4' }),
      );
      expectLegacy(aAgain.body, 'wb-a', 'Sheet1!A1:C4', 'C4');
      expect(aAgain.body.externalWorkbookPlacements).toHaveLength(2);
      const withoutA = await disconnect(r.id, { externalWorkbookId: 'wb-a', resultLocation: 'Sheet1!A1' });
      expectLegacy(withoutA.body, 'wb-b', "'Sheet 2'!B2", null);
      expectLegacy(await getReport(r.id), 'wb-b', "'Sheet 2'!B2", null);
      const none = await disconnect(r.id, {
        externalWorkbookId: 'wb-b',
        sheetName: 'Sheet 2',
        anchorCell: 'B2',
      });
      expectLegacy(none.body, null, null, null);
      expect(none.body.externalWorkbookPlacements).toEqual([]);
    });

    it.each(['GOOGLE_SHEETS', 'EXCEL'])('accepts host %s', async (host) => {
      const r = await freshReport();
      const [p] = await place(r.id, spot({ host }));
      expect(p.host).toBe(host);
    });

    it.each(['HOST_A', 'google_sheets', 'SMARTSHEET', 7])('answers 400 for host %j', async (host) => {
      const r = await freshReport();
      const res = await connect(r.id, spot({ host }));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain('host');
      expect(await placementRows(r.id)).toHaveLength(0);
    });

    it.each<[string, Body]>([
      ['ephemeral', { ephemeral: 1 }],
      ['resultChecksum', { resultChecksum: 'abc123' }],
    ])('answers 400 for the unknown field %s', async (field, extra) => {
      const r = await freshReport();
      const res = await connect(r.id, spot(extra));
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain(field);
      expect(await placementRows(r.id)).toHaveLength(0);
    });

    it.each<[string, unknown]>([
      ['no body', undefined],
      ['no externalWorkbookId', { resultLocation: 'Sheet1!A1' }],
      ['no resultLocation', { externalWorkbookId: 'wb-1' }],
      ['an empty externalWorkbookId', { externalWorkbookId: '', resultLocation: 'Sheet1!A1' }],
      ['a number as externalWorkbookId', { externalWorkbookId: 5, resultLocation: 'Sheet1!A1' }],
      [
        'a number as placementId',
        { externalWorkbookId: 'wb-1', resultLocation: 'Sheet1!A1', placementId: 5 },
      ],
      ['an array body', [{ externalWorkbookId: 'wb-1', resultLocation: 'Sheet1!A1' }]],
    ])('answers 400 validation_failed for %s', async (_label, body) => {
      const r = await freshReport();
      const res = await connect(r.id, body);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(await placementRows(r.id)).toHaveLength(0);
    });
  });

  describe('PUT .../refresh', () => {
    it('records refreshedAt and refreshedByUserId on that placement only and sets refreshedBy on the report', async () => {
      const r = await freshReport();
      const [p, q] = await place(
        r.id,
        spot({ resultLocation: 'Sheet1!A1' }),
        spot({ resultLocation: 'Sheet1!A2' }),
      );
      const before = await getReport(r.id);
      expect(before.refreshedBy).toBeNull();
      expect(before.refreshedByUser.id).toBe(t.admin.userId);

      const res = await refresh(r.id, { placementId: p.id }, viewer);
      expect(res.status).toBe(200);
      const byId = new Map((res.body.externalWorkbookPlacements as PlacementBody[]).map((x) => [x.id, x]));
      expect(byId.get(p.id)).toMatchObject({
        refreshedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        refreshedByUserId: viewer.userId,
      });
      expect(byId.get(q.id)).toMatchObject({ refreshedAt: null, refreshedByUserId: null });
      expect(res.body.refreshedBy).toBe(viewer.userId);
      expect(res.body.refreshedByUser).toEqual({
        id: viewer.userId,
        email: viewer.email,
        firstName: 'Vera',
        picture: null,
      });
      expect(res.body.version).toBe(before.version);
      expect(res.body.updatedAt).toBe(before.updatedAt);
      const rows = await placementRows(r.id);
      expect(rows.find((x) => x.placement_id === p.id)!.refreshed_at).toBeInstanceOf(Date);
      expect(rows.find((x) => x.placement_id === q.id)!.refreshed_at).toBeNull();
    });

    it('addresses the placement by name or by resultLocation, like disconnect', async () => {
      const r = await freshReport();
      const [p, q] = await place(
        r.id,
        spot({ resultLocation: 'Sheet1!A1' }),
        spot({ resultLocation: "'My tab'!C3" }),
      );
      expect(
        (
          await refresh(r.id, {
            externalWorkbookId: 'wb-1',
            sheetName: 'Sheet1',
            anchorCell: '$a$1',
            sheetId: 's1',
          })
        ).status,
      ).toBe(200);
      expect(
        (await refresh(r.id, { externalWorkbookId: 'wb-1', resultLocation: "'My tab'!c3" }, viewer)).status,
      ).toBe(200);
      const rows = await placementRows(r.id);
      expect(rows.map((x) => [x.placement_id, x.refreshed_by_user_id])).toEqual([
        [p.id, t.admin.userId],
        [q.id, viewer.userId],
      ]);
    });

    it.each<[string, Body | undefined]>([
      ['no body', undefined],
      ['an unknown placementId', { placementId: 'nope' }],
      ['a sheetId alone', { sheetId: 's1' }],
      [
        'a different sheetId',
        { externalWorkbookId: 'wb-1', sheetName: 'Sheet1', anchorCell: 'B3', sheetId: 's2' },
      ],
      ['no anchor', { externalWorkbookId: 'wb-1', sheetName: 'Sheet1' }],
    ])('answers 200 and changes nothing when the target (%s) matches nothing', async (_label, body) => {
      const r = await freshReport();
      await place(r.id, spot());
      const before = await getReport(r.id);
      const res = await expectNoChange(r.id, () => refresh(r.id, body));
      expect(res.body).toEqual(before);
      expect((await reportRow(r.id)).refreshed_by).toBeNull();
    });

    it.each<[string, Body]>([
      ['ephemeral', { placementId: 'x', ephemeral: 1 }],
      ['resultChecksum', { placementId: 'x', resultChecksum: 'abc' }],
    ])('answers 400 for the unknown field %s', async (field, body) => {
      const r = await freshReport();
      const res = await refresh(r.id, body);
      expect(res.status).toBe(400);
      expectErrorShape(res.body, 400, 'validation_failed');
      expect(JSON.stringify(res.body.message)).toContain(field);
    });
  });

  describe('concurrency: placements are rows, nothing is lost', () => {
    it('20 parallel connects of distinct spots, then 20 parallel disconnects of 10 of them interleaved with 10 connects', async () => {
      const r = await freshReport();
      const first = await Promise.all(
        Array.from({ length: 20 }, (_, i) => connect(r.id, spot({ resultLocation: `Sheet1!A${i + 1}` }))),
      );
      expect(first.map((res) => res.status)).toEqual(Array(20).fill(200));
      const rows = await placementRows(r.id);
      expect(rows.map((p) => p.anchor_cell).sort()).toEqual(
        Array.from({ length: 20 }, (_, i) => `A${i + 1}`).sort(),
      );
      expect(new Set(rows.map((p) => p.placement_id)).size).toBe(20);
      expect(rows.every((p) => p.placement_id !== null)).toBe(true);

      const byAnchor = new Map(rows.map((p) => [p.anchor_cell, p]));
      const ops: Array<PromiseLike<{ status: number }>> = [];
      for (let i = 1; i <= 10; i++) {
        // Each of A1..A10 is disconnected twice: by id and by name; the second finds nothing.
        ops.push(disconnect(r.id, { placementId: byAnchor.get(`A${i}`)!.placement_id }));
        ops.push(connect(r.id, spot({ resultLocation: `Sheet2!B${i}`, sheetId: 's2' })));
        ops.push(disconnect(r.id, { externalWorkbookId: 'wb-1', sheetName: 'Sheet1', anchorCell: `A${i}` }));
      }
      const results = await Promise.all(ops);
      expect(results.map((res) => res.status)).toEqual(Array(30).fill(200));

      const after = await placementRows(r.id);
      const expected = [
        ...Array.from({ length: 10 }, (_, i) => `wb-1|Sheet1|A${i + 11}`),
        ...Array.from({ length: 10 }, (_, i) => `wb-1|Sheet2|B${i + 1}`),
      ].sort();
      expect(
        after
          .map((p) =>
            spotKey({
              workbookId: p.external_workbook_id,
              sheetName: p.sheet_name,
              anchorCell: p.anchor_cell,
            }),
          )
          .sort(),
      ).toEqual(expected);
      // The survivors kept their ids.
      for (let i = 11; i <= 20; i++) {
        expect(after.find((p) => p.anchor_cell === `A${i}`)!.placement_id).toBe(
          byAnchor.get(`A${i}`)!.placement_id,
        );
      }
      expect(new Set(after.map((p) => p.placement_id)).size).toBe(20);
      const api = await getReport(r.id);
      expect(api.externalWorkbookPlacements!.map(spotKey).sort()).toEqual(expected);
    });

    it('parallel connects of the same spot (in any spelling) yield exactly one placement', async () => {
      const r = await freshReport();
      const spellings = ['Sheet1!B3', 'Sheet1!$b$3', 'Sheet1!b3', 'Sheet1!$B$3:D9'];
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          connect(r.id, spot({ resultLocation: spellings[i % spellings.length] }), i % 2 ? viewer : t.admin),
        ),
      );
      expect(results.map((res) => res.status)).toEqual(Array(12).fill(200));
      const rows = await placementRows(r.id);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ sheet_name: 'Sheet1', anchor_cell: 'B3' });
    });

    it('parallel connects with the same new placementId yield exactly one placement', async () => {
      const r = await freshReport();
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          connect(r.id, spot({ placementId: 'same-id', resultLocation: `Sheet1!C${i + 1}` })),
        ),
      );
      expect(results.map((res) => res.status)).toEqual(Array(8).fill(200));
      const rows = await placementRows(r.id);
      expect(rows.map((p) => p.placement_id)).toEqual(['same-id']);
    });
  });

  describe('access and input checks on every placement endpoint', () => {
    let r: ReportBody;
    let placementId: string;
    beforeAll(async () => {
      r = await freshReport();
      [{ id: placementId }] = (await place(r.id, spot())) as Array<PlacementBody & { id: string }>;
    });

    const endpoints = [
      {
        name: 'connect',
        call: (
          rep: number | string,
          actor: Actor,
          dep: number | string,
          body: unknown = spot({ resultLocation: 'Sheet1!Q1' }),
        ) => connect(rep as number, body, actor, dep),
      },
      {
        name: 'disconnect',
        call: (
          rep: number | string,
          actor: Actor,
          dep: number | string,
          body: unknown = { placementId: 'p' },
        ) => disconnect(rep, body, actor, dep),
      },
      {
        name: 'refresh',
        call: (
          rep: number | string,
          actor: Actor,
          dep: number | string,
          body: unknown = { placementId: 'p' },
        ) => refresh(rep, body, actor, dep),
      },
    ];
    const paths = (dep: number | string, rep: number | string) => ({
      connect: { method: 'put' as const, path: reportsPath(dep, `/${rep}/connect-workbook`) },
      disconnect: { method: 'delete' as const, path: reportsPath(dep, `/${rep}/connect-workbook`) },
      refresh: { method: 'put' as const, path: reportsPath(dep, `/${rep}/refresh`) },
    });

    describe.each(endpoints)('$name', ({ name, call }) => {
      it('answers 401 without a token, or with an unknown one', async () => {
        const { method, path } = paths(deploymentId, r.id)[name as 'connect'];
        const none = await t.http()[method](path).send(spot());
        expect(none.status).toBe(401);
        expectErrorShape(none.body, 401, 'unauthorized');
        const bad = await t.http()[method](path).set(bearer('not-a-real-token')).send(spot());
        expect(bad.status).toBe(401);
        expectErrorShape(bad.body, 401, 'unauthorized');
      });

      it('answers 403 to a user without any role', async () => {
        const res = await call(r.id, noRole, deploymentId);
        expect(res.status).toBe(403);
        expectErrorShape(res.body, 403, 'forbidden');
        expect(res.body.message).toContain('ReportRead');
      });

      it("answers 404 for another account's report, and leaves it alone", async () => {
        const before = await placementRows(globexReport.id);
        // Under the other account's deployment it is the deployment that is missing.
        for (const [res, code] of [
          [await call(globexReport.id, t.admin, globexDeploymentId), 'deployment_not_found'],
          [await call(globexReport.id, t.admin, deploymentId), 'report_not_found'],
          [await call(globexReport.id, viewer, globexDeploymentId), 'deployment_not_found'],
        ] as const) {
          expect(res.status).toBe(404);
          expectErrorShape(res.body, 404, code);
        }
        expect(await placementRows(globexReport.id)).toEqual(before);
      });

      it('answers 404 for a report of another deployment of the same account, and leaves it alone', async () => {
        const res = await call(otherDeploymentReport.id, t.admin, deploymentId);
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'report_not_found');
        const wrongDeployment = await call(r.id, t.admin, otherDeploymentId);
        expect(wrongDeployment.status).toBe(404);
        expect(await placementRows(otherDeploymentReport.id)).toHaveLength(0);
      });

      it('answers 404 for a report that does not exist', async () => {
        const res = await call(2_000_000_000, t.admin, deploymentId);
        expect(res.status).toBe(404);
        expectErrorShape(res.body, 404, 'report_not_found');
      });

      it.each(BAD_IDS)('answers 400 for the bad id %j (report or deployment)', async (bad) => {
        for (const res of [await call(bad, t.admin, deploymentId), await call(r.id, t.admin, bad)]) {
          expect(res.status).toBe(400);
          expectErrorShape(res.body, 400, 'validation_failed');
        }
      });

      it('answers 400 for bad bodies and changes nothing', async () => {
        const before = await placementRows(r.id);
        for (const body of [
          { placementId, unknownField: true },
          { placementId: 42 },
          { externalWorkbookId: ['wb-1'], resultLocation: 'Sheet1!B3' },
          [placementId],
        ]) {
          const res = await call(r.id, t.admin, deploymentId, body);
          expect(res.status).toBe(400);
          expectErrorShape(res.body, 400, 'validation_failed');
        }
        expect(await placementRows(r.id)).toEqual(before);
      });
    });
  });
});
