import { QueryFailedError } from 'typeorm';
import { databaseUnavailable } from '../../src/core/database/unavailable.js';
import { toErrorBody } from '../../src/core/errors/exception.filter.js';

const pgError = (code: string, message = 'error') => Object.assign(new Error(message), { code });
const failed = (driverError: Error) => new QueryFailedError('SELECT 1', [], driverError);

describe('databaseUnavailable', () => {
  it.each(['57014', '55P03', '57P01', '57P02', '57P03', '53300'])('maps PostgreSQL %s to 503', (code) => {
    expect(databaseUnavailable(failed(pgError(code)))).toBe(true);
    expect(toErrorBody(failed(pgError(code)))).toMatchObject({
      statusCode: 503,
      code: 'database_unavailable',
    });
  });

  it.each([
    'Query read timeout',
    'Connection terminated unexpectedly',
    'timeout exceeded when trying to connect',
  ])('maps "%s" to 503', (message) => {
    expect(databaseUnavailable(failed(new Error(message)))).toBe(true);
    expect(databaseUnavailable(new Error(message))).toBe(true);
  });

  it('maps socket errors of a connect, also aggregated over addresses', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), {
      code: 'ECONNREFUSED',
      syscall: 'connect',
    });
    expect(databaseUnavailable(refused)).toBe(true);
    expect(databaseUnavailable(new AggregateError([refused], ''))).toBe(true);
  });

  it.each(['23505', '23503', '22P02', '22001', '22003', '22007', '22021', '40001', '42703'])(
    'never maps PostgreSQL %s (caused by input or code) to 503',
    (code) => {
      expect(databaseUnavailable(failed(pgError(code)))).toBe(false);
      expect(toErrorBody(failed(pgError(code))).statusCode).not.toBe(503);
    },
  );

  it('ignores look-alikes: a code without a socket call, a non-error', () => {
    expect(databaseUnavailable(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(false);
    expect(databaseUnavailable('Connection terminated')).toBe(false);
    expect(databaseUnavailable(null)).toBe(false);
  });
});
