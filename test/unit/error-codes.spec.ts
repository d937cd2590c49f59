import fs from 'node:fs';
import path from 'node:path';
import { HttpException } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { ERROR_CODES, isErrorCode } from '../../src/core/errors/error-codes.js';
import { toErrorBody } from '../../src/core/errors/exception.filter.js';

/** Every TypeScript source under `dir`, as [path, text]. */
function sources(dir: string): Array<[string, string]> {
  return fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => [path.join(dir, f), fs.readFileSync(path.join(dir, f), 'utf8')]);
}

const SRC = sources('src');
const CATALOGUE = 'src/core/errors/error-codes.ts';

describe('the error code catalogue', () => {
  it('gives every code an error status and a meaning', () => {
    for (const [code, spec] of Object.entries(ERROR_CODES)) {
      expect({ code, status: spec.status >= 400 && spec.status <= 599 }).toEqual({ code, status: true });
      expect({ code, meaning: spec.meaning.trim().length > 0 }).toEqual({ code, meaning: true });
    }
  });

  it('is listed exactly, in order, by the table of docs/api-conventions.md', () => {
    const doc = fs.readFileSync('docs/api-conventions.md', 'utf8');
    const block = /<!-- error-codes:begin[^>]*-->\n([\s\S]*?)<!-- error-codes:end -->/.exec(doc);
    expect(block).not.toBeNull();
    const rows = block![1]
      .split('\n')
      .map((line) => /^\| `([^`]+)` \| (\d{3}) \| (.*) \|$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1], Number(m[2]), m[3]]);
    expect(rows).toEqual(Object.entries(ERROR_CODES).map(([code, s]) => [code, s.status, s.meaning]));
  });

  it('agrees with every code table of the other docs pages', () => {
    const wrong: string[] = [];
    for (const file of fs.readdirSync('docs').filter((f) => f.endsWith('.md'))) {
      for (const m of fs
        .readFileSync(path.join('docs', file), 'utf8')
        .matchAll(/^\| `(\w+)` \| ([45]\d\d) \|/gm)) {
        const [, code, status] = m;
        if (!isErrorCode(code) || ERROR_CODES[code].status !== Number(status))
          wrong.push(`${file}: ${code} ${status}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('declares every code the sources throw, with the status they answer it with', () => {
    // Throwers are slices of the catalogue (`const x = errorsOf(...)`), plus direct `errorBody` calls.
    const throwers = new Set(['coreError']);
    for (const [, text] of SRC)
      for (const m of text.matchAll(/const (\w+) = errorsOf\(/g)) throwers.add(m[1]);
    const undeclared: string[] = [];
    let calls = 0;
    for (const [file, text] of SRC) {
      for (const m of text.matchAll(/\b(\w+)\(\s*'(\w+)'/g)) {
        if (!throwers.has(m[1])) continue;
        calls += 1;
        if (!isErrorCode(m[2])) undeclared.push(`${file}: ${m[2]}`);
      }
      for (const m of text.matchAll(/errorBody\(\s*(\d{3}),\s*'(\w+)'/g)) {
        calls += 1;
        if (!isErrorCode(m[2]) || ERROR_CODES[m[2]].status !== Number(m[1]))
          undeclared.push(`${file}: ${m[2]} ${m[1]}`);
      }
    }
    expect(calls).toBeGreaterThan(100);
    expect(undeclared).toEqual([]);
  });

  it('declares the codes the exception filter gives to framework and database errors', () => {
    for (let status = 400; status <= 599; status += 1) {
      const body = toErrorBody(new HttpException('x', status));
      expect({ status, code: body.code, declared: isErrorCode(body.code) }).toEqual({
        status,
        code: body.code,
        declared: true,
      });
    }
    const filter = fs.readFileSync('src/core/errors/exception.filter.ts', 'utf8');
    const pgCodes = [...filter.matchAll(/^\s*'([0-9A-Z]{5})': \[/gm)].map((m) => m[1]);
    expect(pgCodes.length).toBeGreaterThan(5);
    for (const pgCode of pgCodes) {
      const body = toErrorBody(
        new QueryFailedError('SELECT 1', [], Object.assign(new Error('x'), { code: pgCode })),
      );
      expect({
        pgCode,
        code: body.code,
        status: isErrorCode(body.code) && ERROR_CODES[body.code].status,
      }).toEqual({
        pgCode,
        code: body.code,
        status: body.statusCode,
      });
    }
  });

  it('holds no code that nothing answers', () => {
    const text = SRC.filter(([file]) => file !== CATALOGUE)
      .map(([, t]) => t)
      .join('\n');
    const unused = Object.keys(ERROR_CODES).filter((code) => !text.includes(`'${code}'`));
    expect(unused).toEqual([]);
  });
});
