import {
  findPlacement,
  latest,
  readTarget,
  spotOf,
  type PlacementTarget,
  type StoredPlacement,
} from '../../src/modules/reports/placement-match.js';

let nextRow = 1;
function stored(fields: Partial<StoredPlacement> = {}): StoredPlacement {
  const rowId = String(nextRow++);
  return {
    rowId,
    placementId: `p${rowId}`,
    externalWorkbookId: 'wb-1',
    sheetId: 's1',
    sheetName: 'Sheet1',
    anchorCell: 'B3',
    resultLocation: 'Sheet1!B3',
    placedAt: new Date('2025-01-01T00:00:00Z'),
    ...fields,
  };
}

const NOTHING: PlacementTarget = { kind: 'nothing' };

describe('placement addressing', () => {
  describe('readTarget', () => {
    it('rule 2: addresses by placementId, carrying sheetId along as a narrowing field', () => {
      expect(readTarget({ placementId: 'abc' })).toEqual({ kind: 'id', placementId: 'abc', sheetId: null });
      expect(readTarget({ placementId: 'abc', sheetId: 's9', externalWorkbookId: 'wb' })).toEqual({
        kind: 'id',
        placementId: 'abc',
        sheetId: 's9',
      });
    });

    it('rule 2: addresses by externalWorkbookId + sheetName + anchorCell, anchor normalised', () => {
      expect(readTarget({ externalWorkbookId: 'wb', sheetName: 'Sheet1', anchorCell: '$b$3' })).toEqual({
        kind: 'spot',
        externalWorkbookId: 'wb',
        sheet: 'Sheet1',
        anchor: 'B3',
        sheetId: null,
      });
    });

    it('rule 2: addresses by externalWorkbookId + a resultLocation naming sheet and anchor', () => {
      expect(readTarget({ externalWorkbookId: 'wb', resultLocation: "'It''s here'!c4:d9" })).toEqual({
        kind: 'spot',
        externalWorkbookId: 'wb',
        sheet: "It's here",
        anchor: 'C4',
        sheetId: null,
      });
    });

    it('accepts sheetName and resultLocation together when they agree', () => {
      expect(
        readTarget({
          externalWorkbookId: 'wb',
          sheetName: 'Sheet1',
          anchorCell: 'b3',
          resultLocation: 'Sheet1!$B$3',
          sheetId: 's1',
        }),
      ).toEqual({ kind: 'spot', externalWorkbookId: 'wb', sheet: 'Sheet1', anchor: 'B3', sheetId: 's1' });
    });

    it.each([
      ['an empty body', {}],
      [
        'nulls everywhere',
        { placementId: null, externalWorkbookId: null, sheetName: null, anchorCell: null },
      ],
      ['empty strings', { placementId: '', externalWorkbookId: '', sheetName: '', anchorCell: '' }],
      ['rule 3: no sheetName', { externalWorkbookId: 'wb', anchorCell: 'B3' }],
      ['rule 3: no anchor', { externalWorkbookId: 'wb', sheetName: 'Sheet1' }],
      ['rule 3: a resultLocation without a sheet', { externalWorkbookId: 'wb', resultLocation: 'B3' }],
      ['rule 3: no spreadsheet', { sheetName: 'Sheet1', anchorCell: 'B3' }],
      ['rule 4: sheetId alone', { sheetId: 's1' }],
      [
        'rule 4: sheetId in place of sheetName',
        { externalWorkbookId: 'wb', sheetId: 's1', anchorCell: 'B3' },
      ],
      ['a bad anchor', { externalWorkbookId: 'wb', sheetName: 'Sheet1', anchorCell: 'B0' }],
      ['a bad resultLocation', { externalWorkbookId: 'wb', resultLocation: 'Sheet1' }],
      [
        'a sheetName disagreeing with resultLocation',
        { externalWorkbookId: 'wb', sheetName: 'Sheet2', resultLocation: 'Sheet1!B3' },
      ],
      [
        'an anchorCell disagreeing with resultLocation',
        { externalWorkbookId: 'wb', anchorCell: 'C3', resultLocation: 'Sheet1!B3' },
      ],
      [
        'sheet names differing only in case',
        { externalWorkbookId: 'wb', sheetName: 'sheet1', resultLocation: 'Sheet1!B3' },
      ],
    ])('addresses nothing with %s', (_label, fields) => {
      expect(readTarget(fields)).toEqual(NOTHING);
    });
  });

  describe('spotOf', () => {
    it('uses the stored sheet name and anchor, normalising the anchor', () => {
      expect(spotOf(stored({ anchorCell: '$c$7', resultLocation: 'Other!Z9' }))).toEqual({
        sheet: 'Sheet1',
        anchor: 'C7',
      });
    });

    it('falls back to the location for rows recorded before sheet name and anchor were stored', () => {
      expect(
        spotOf(stored({ sheetName: null, anchorCell: null, resultLocation: "'Sheet 1'!$b$3:d9" })),
      ).toEqual({ sheet: 'Sheet 1', anchor: 'B3' });
    });

    it('has no spot when neither the columns nor the location say', () => {
      expect(spotOf(stored({ sheetName: null, anchorCell: null, resultLocation: 'garbage' }))).toEqual({
        sheet: null,
        anchor: null,
      });
    });
  });

  describe('findPlacement', () => {
    const spot = (fields: Partial<Extract<PlacementTarget, { kind: 'spot' }>> = {}): PlacementTarget => ({
      kind: 'spot',
      externalWorkbookId: 'wb-1',
      sheet: 'Sheet1',
      anchor: 'B3',
      sheetId: null,
      ...fields,
    });

    it('rule 1: picks exactly the one placement at the spot, not its neighbours', () => {
      const target = stored();
      const others = [
        stored({ anchorCell: 'B4', resultLocation: 'Sheet1!B4' }),
        stored({ sheetName: 'Sheet2', sheetId: 's2', resultLocation: 'Sheet2!B3' }),
        stored({ externalWorkbookId: 'wb-2' }),
        stored({ sheetName: 'sheet1', resultLocation: 'sheet1!B3' }),
      ];
      expect(findPlacement([...others, target], spot())).toBe(target);
    });

    it('finds by placementId', () => {
      const a = stored();
      const b = stored();
      expect(findPlacement([a, b], { kind: 'id', placementId: b.placementId!, sheetId: null })).toBe(b);
      expect(findPlacement([a, b], { kind: 'id', placementId: 'nope', sheetId: null })).toBeNull();
    });

    it('a nothing target finds nothing', () => {
      expect(findPlacement([stored()], NOTHING)).toBeNull();
    });

    it('rule 5: a sent sheetId excludes placements stored under another sheet id', () => {
      const p = stored({ sheetId: 's1' });
      expect(findPlacement([p], spot({ sheetId: 's2' }))).toBeNull();
      expect(findPlacement([p], spot({ sheetId: 's1' }))).toBe(p);
      expect(findPlacement([p], { kind: 'id', placementId: p.placementId!, sheetId: 's2' })).toBeNull();
    });

    it('decision: a sheetId is matched by name and anchor against a placement stored without one', () => {
      const p = stored({ sheetId: null });
      expect(findPlacement([p], spot({ sheetId: 'anything' }))).toBe(p);
    });

    it('rule 6: by name without sheetId, a placement stored under an old sheet id is found', () => {
      const p = stored({ sheetId: 'old' });
      expect(findPlacement([p], spot())).toBe(p);
    });

    it('matches legacy rows holding only a location', () => {
      const p = stored({
        placementId: null,
        sheetId: null,
        sheetName: null,
        anchorCell: null,
        resultLocation: "'Sheet 1'!$b$3",
      });
      expect(findPlacement([p], spot({ sheet: 'Sheet 1' }))).toBe(p);
      expect(findPlacement([p], spot({ sheet: 'sheet 1' }))).toBeNull();
    });

    it('never matches a placement without an id by an id', () => {
      expect(
        findPlacement([stored({ placementId: null })], { kind: 'id', placementId: '', sheetId: null }),
      ).toBe(null);
    });

    it('picks the most recently placed when several rows share a spot', () => {
      const older = stored({ placedAt: new Date('2025-01-01T00:00:00Z') });
      const newer = stored({ placedAt: new Date('2025-02-01T00:00:00Z') });
      const undated = stored({ placedAt: null });
      expect(findPlacement([newer, older, undated], spot())).toBe(newer);
    });
  });

  describe('latest', () => {
    it('is null for no placements', () => {
      expect(latest([])).toBeNull();
    });

    it('prefers the later placedAt, then the later row; undated rows come last', () => {
      const a = stored({ rowId: '9', placedAt: new Date('2025-03-01T00:00:00Z') });
      const b = stored({ rowId: '10', placedAt: new Date('2025-03-01T00:00:00Z') });
      const c = stored({ rowId: '100', placedAt: null });
      expect(latest([a, c, b])).toBe(b);
      expect(latest([c])).toBe(c);
      expect(
        latest([stored({ rowId: '2', placedAt: null }), stored({ rowId: '10', placedAt: null })])!.rowId,
      ).toBe('10');
    });
  });
});
