import { QueryFailedError } from 'typeorm';

/**
 * PostgreSQL error codes that say the database, not the request, is at fault: the statement or
 * lock wait outlived its bound (`statement_timeout`, `lock_timeout`), the server is shutting
 * down, starting up or out of connections. Input errors (classes 22 and 23) are not here.
 */
const PG_UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  '57014', // query_canceled: statement_timeout
  '55P03', // lock_not_available: lock_timeout
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '08000', // connection_exception
  '08003', // connection_does_not_exist
  '08006', // connection_failure
]);

/** Socket errors of the connection to PostgreSQL. */
const SOCKET_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * Messages of node-postgres and pg-pool when the server is unreachable, went away or stopped
 * answering (`query_timeout`, or no connection within `connectionTimeoutMillis`).
 */
const PG_CLIENT_MESSAGES =
  /^(Query read timeout|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed|Connection is not open|Cannot use a pool after calling end)/;

/**
 * Whether `err` means PostgreSQL is unreachable or did not answer within its bounds, so the
 * request may succeed if retried: answered `503 database_unavailable`, never 500.
 */
export function databaseUnavailable(err: unknown): boolean {
  const cause = err instanceof QueryFailedError ? (err.driverError as unknown) : err;
  // Duck-typed: socket errors come from Node's own realm, where `instanceof Error` can fail.
  if (typeof cause !== 'object' || cause === null) return false;
  const { code, syscall, message, errors } = cause as {
    code?: unknown;
    syscall?: unknown;
    message?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string') {
    if (PG_UNAVAILABLE_CODES.has(code)) return true;
    // Socket errors only from a socket call, so an unrelated `code` never matches.
    if (SOCKET_CODES.has(code) && typeof syscall === 'string') return true;
  }
  if (typeof message === 'string' && PG_CLIENT_MESSAGES.test(message)) return true;
  // A connect that failed on every address (IPv4 and IPv6) rejects with an AggregateError.
  if (Array.isArray(errors)) return errors.some((e) => databaseUnavailable(e));
  return false;
}
