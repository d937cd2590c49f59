import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { REFERENCE_SCHEMAS, referenceBodyProblems } from '../support/reference-schemas.js';

/**
 * The response schemas the e2e tests validate bodies against (`expectReferenceBody`) are an
 * extract of the reference document (`/work/shared/spec/reference`, outside the repository),
 * committed so a clone without it tests the same; this keeps the extract equal to the document
 * wherever it is at hand, and checks the validator itself.
 */
const REFERENCE = path.resolve(
  process.env.REFERENCE_SPEC_DIR ?? '../shared/spec/reference',
  'platform-api.openapi.yaml',
);

describe('reference response schemas', () => {
  it('keeps the extract equal to the reference document (when it is at hand)', async () => {
    if (!fs.existsSync(REFERENCE)) {
      console.warn(`${REFERENCE} not found: the committed extract is used as it is`);
      return;
    }
    // The script is the one definition of the extraction (an ES module; Jest loads it through swc).
    const { extract } = await import('../../scripts/extract-reference-schemas.mjs');
    const fresh = extract(parse(fs.readFileSync(REFERENCE, 'utf8')));
    expect(JSON.parse(fs.readFileSync(REFERENCE_SCHEMAS, 'utf8'))).toEqual(fresh);
  });

  it('accepts a conforming body, extra fields included', () => {
    expect(
      referenceBodyProblems('startExport', 200, {
        jobId: 'j1',
        expiresAt: '2026-11-28T10:00:00.000Z',
        more: 1,
      }),
    ).toEqual([]);
  });

  it('names what is missing, mistyped, outside an enum or malformed', () => {
    expect(referenceBodyProblems('startExport', 200, { jobId: 7 })).toEqual(
      expect.arrayContaining(["(body) must have required property 'expiresAt'", '/jobId must be string']),
    );
    expect(referenceBodyProblems('startExport', 200, { jobId: 'j', expiresAt: 'tomorrow' })).toEqual([
      '/expiresAt must match format "date-time"',
    ]);
    expect(referenceBodyProblems('getExportStatus', 200, { status: 'done' }).join()).toMatch(
      /must be equal to one of the allowed values/,
    );
  });

  it('refuses an operation or status the extract does not hold', () => {
    expect(() => referenceBodyProblems('noSuchOperation', 200, {})).toThrow(/not in/);
    expect(() => referenceBodyProblems('startExport', 201, {})).toThrow(/no 201 answer/);
    expect(() => referenceBodyProblems('downloadExport', 200, {})).toThrow(/not JSON/);
  });
});
