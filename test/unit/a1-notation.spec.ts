import { formatLocation, normalizeCell, parseLocation } from '../../src/modules/reports/a1-notation.js';

describe('A1 notation', () => {
  describe('normalizeCell', () => {
    it.each([
      ['B3', 'B3'],
      ['b3', 'B3'],
      ['$b$3', 'B3'],
      ['$B3', 'B3'],
      ['B$3', 'B3'],
      ['  c12 ', 'C12'],
      ['xfd1048576', 'XFD1048576'],
      ['A1', 'A1'],
    ])('%j is %j (case-insensitive, without $)', (text, expected) => {
      expect(normalizeCell(text)).toBe(expected);
    });

    it.each([
      '',
      'B',
      '3',
      'A0',
      'A01',
      'AAAA1',
      'XFE1',
      'A1048577',
      'A12345678',
      'B3:C4',
      'Sheet!B3',
      '$$B3',
      'B 3',
      'B-3',
      '1B',
    ])('%j is not one cell of the grid', (text) => {
      expect(normalizeCell(text)).toBeNull();
    });
  });

  describe('parseLocation', () => {
    it.each([
      ['Sheet1!A1', { sheet: 'Sheet1', anchor: 'A1', end: null }],
      ['Sheet1!$b$3', { sheet: 'Sheet1', anchor: 'B3', end: null }],
      ["'Sheet 1'!b3", { sheet: 'Sheet 1', anchor: 'B3', end: null }],
      ["'It''s here'!A1", { sheet: "It's here", anchor: 'A1', end: null }],
      ["''''!A1", { sheet: "'", anchor: 'A1', end: null }],
      ["'a!b'!C4", { sheet: 'a!b', anchor: 'C4', end: null }],
      ['Sheet!A1:D20', { sheet: 'Sheet', anchor: 'A1', end: 'D20' }],
      ['Sheet!$a$1:$d$20', { sheet: 'Sheet', anchor: 'A1', end: 'D20' }],
      ["'Q1 data'!c3:e9", { sheet: 'Q1 data', anchor: 'C3', end: 'E9' }],
      ['A1', { sheet: null, anchor: 'A1', end: null }],
      ['a1:b2', { sheet: null, anchor: 'A1', end: 'B2' }],
      ['  Sheet1!A1  ', { sheet: 'Sheet1', anchor: 'A1', end: null }],
      ['sheet1!A1', { sheet: 'sheet1', anchor: 'A1', end: null }],
    ])('%j', (text, expected) => {
      expect(parseLocation(text)).toEqual(expected);
    });

    it('keeps the sheet name exactly as written (names compare case-sensitively)', () => {
      expect(parseLocation('sheet1!A1')!.sheet).not.toBe(parseLocation('Sheet1!A1')!.sheet);
      expect(parseLocation("' Padded '!A1")!.sheet).toBe(' Padded ');
    });

    it.each([
      '',
      'Sheet1',
      'Sheet1!',
      '!A1',
      "''!A1",
      "'Unterminated!A1",
      "'Sheet'A1",
      "'It's'!A1",
      'Sheet1!A1:B2:C3',
      'Sheet1!A1:',
      'Sheet1!:A1',
      'Sheet1!A0',
      'Sheet1!XFE1',
      'Sheet1!A1:B0',
      'Sheet1!R1C1',
    ])('%j is not A1 notation', (text) => {
      expect(parseLocation(text)).toBeNull();
    });
  });

  describe('formatLocation', () => {
    it.each([
      ['Sheet1', 'A1', null, 'Sheet1!A1'],
      ['Sheet 1', 'B3', null, "'Sheet 1'!B3"],
      ["It's here", 'A1', null, "'It''s here'!A1"],
      ['Data', 'A1', 'D20', 'Data!A1:D20'],
      ['AB12', 'A1', null, "'AB12'!A1"],
      ['2024', 'A1', null, "'2024'!A1"],
      ['a!b', 'A1', null, "'a!b'!A1"],
    ])('(%j, %j, %j) is %j', (sheet, anchor, end, expected) => {
      expect(formatLocation(sheet, anchor, end)).toBe(expected);
    });

    it.each(['Sheet1', 'Sheet 1', "It's here", "''", 'AB12', '2024', 'a!b', 'Übersicht', 'x.y_z', ' sp '])(
      'round-trips the sheet name %j through parseLocation',
      (sheet) => {
        expect(parseLocation(formatLocation(sheet, 'C7', 'E9'))).toEqual({ sheet, anchor: 'C7', end: 'E9' });
        expect(parseLocation(formatLocation(sheet, 'C7'))).toEqual({ sheet, anchor: 'C7', end: null });
      },
    );
  });
});
