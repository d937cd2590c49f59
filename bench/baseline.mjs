// The bench baseline: the five benchmarked report requests written directly on node:http + pg,
// with the service's own token check, SQL, placement matching and response mapping.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench PORT=3999 node bench/baseline.mjs
//
// Env: DATABASE_URL, PORT (default 3999), HOST (default 127.0.0.1), DATABASE_POOL_SIZE (default
// 10, the service's default), BENCH_DIST (the built service, default dist).
//
// Routes (as the service; the caller must hold ReportRead and ReportManage account-wide, e.g. an
// admin, which is what the bench uses; narrower callers get 501 here):
//   GET    /api/v1/deployments/:d/reports?first=&after=   (sort createdAt DESC, id DESC; keyset)
//   GET    /api/v1/deployments/:d/reports/:id             (records the view)
//   PUT    /api/v1/deployments/:d/reports/:id/connect-workbook
//   DELETE /api/v1/deployments/:d/reports/:id/connect-workbook
//   GET    /health/live
//
// Shared with the service, from its one framework-free entry `src/hot-paths.ts` (built into
// BENCH_DIST): the token lookup, the report read SQL, the placement SQL and matching, the view
// buffer, cursors and the response mapper, all with `:name` parameters run through compileNamed;
// none of it loads NestJS or TypeORM. Copied (it lives in a service that loads NestJS): the page
// SQL of ReportListService.list for an account-wide reader (the count is REPORT_COUNT_SQL); when that changes, change
// it here too. run.mjs checks that both servers answer the read scenarios with the same bytes.
import { Buffer } from 'node:buffer';
import { setInterval } from 'node:timers';
import http from 'node:http';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.resolve(root, process.env.BENCH_DIST ?? 'dist');
const load = (rel) => import(pathToFileURL(path.join(DIST, rel)).href);

const {
  Action,
  compileNamed,
  connectMatch,
  connectSpot,
  connectValues,
  DELETE_PLACEMENT_SQL,
  encodeCursor,
  findPlacement,
  hashToken,
  INSERT_PLACEMENT_SQL,
  LOCK_REPORT_SQL,
  parseCursor,
  PLACEMENTS_SQL,
  READ_REPORT_SQL,
  readTarget,
  REPORT_COUNT_SQL,
  statementName,
  reportSelectSql,
  toReport,
  TOKEN_PATTERN,
  TOKEN_SQL,
  toPrincipal,
  TOUCH_KEY_SQL,
  UPDATE_PLACEMENT_SQL,
  ViewBuffer,
} = await load('src/hot-paths.js');
for (const [name, value] of Object.entries({
  READ_REPORT_SQL,
  reportSelectSql,
  toReport,
  findPlacement,
  readTarget,
  compileNamed,
  TOKEN_SQL,
  ViewBuffer,
  REPORT_COUNT_SQL,
  statementName,
})) {
  if (!value) throw new Error(`${name} is no longer exported by src/hot-paths.js: update bench/baseline.mjs`);
}

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
});

/** Views are buffered and written in batches exactly as the service does (view-buffer.js). */
const views = new ViewBuffer(
  (sql, params) => runSql(pool, sql, params),
  (error) => console.warn(`Could not record report views: ${error.message}`),
);
setInterval(() => void views.flush(), Number(process.env.REPORT_VIEW_FLUSH_MS ?? 1000)).unref();

// ---------------------------------------------------------------------------------------------
// Errors and small helpers

/**
 * Runs SQL with `:name` parameters as a named prepared statement, as the service's
 * Database.query does for its hot paths (`{ prepare: true }`): every text here is fixed.
 */
function runSql(db, sql, params) {
  const { text, values } = compileNamed(sql, params);
  return db.query({ name: statementName(text), text, values });
}

const STATUS_TEXT = { 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found' };

class ApiError extends Error {
  constructor(status, code, message) {
    super(Array.isArray(message) ? message.join('; ') : message);
    this.status = status;
    this.code = code;
    this.body = { statusCode: status, error: STATUS_TEXT[status] ?? 'Error', message, code };
  }
}
const badRequest = (code, message) => new ApiError(400, code, message);
const notFound = (what) => new ApiError(404, 'not_found', `${what} was not found`);

function parseId(name, value) {
  if (!/^[1-9]\d{0,9}$/.test(value) || Number(value) > 2_147_483_647) {
    throw badRequest('validation_failed', [`${name} must be an integer between 1 and 2147483647`]);
  }
  return Number(value);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > 1024 * 1024) reject(new ApiError(413, 'payload_too_large', 'The body is too large'));
      else chunks.push(c);
    });
    req.on('end', () => {
      if (size === 0) return resolve({});
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(badRequest('malformed_json', 'The body is not valid JSON'));
      }
    });
    req.on('error', reject);
  });
}

/** The DTO checks of the service for string fields: type, length, nullability; unknown fields are 400. */
function checkBody(body, fields) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('validation_failed', ['The body must be an object']);
  }
  const problems = [];
  for (const key of Object.keys(body))
    if (!(key in fields)) problems.push(`property ${key} should not exist`);
  for (const [key, rule] of Object.entries(fields)) {
    const v = body[key];
    if (v === undefined || (v === null && !rule.required)) {
      if (rule.required) problems.push(`${key} must be a string`);
      continue;
    }
    if (typeof v !== 'string') problems.push(`${key} must be a string`);
    else if (v.length < (rule.min ?? 0) || v.length > rule.max) problems.push(`${key} has a bad length`);
    else if (rule.oneOf && !rule.oneOf.includes(v)) problems.push(`${key} must be one of ${rule.oneOf}`);
  }
  if (problems.length) throw badRequest('validation_failed', problems);
  return body;
}

const CONNECT_FIELDS = {
  externalWorkbookId: { required: true, min: 1, max: 1024 },
  resultLocation: { required: true, min: 1, max: 1024 },
  endResultCell: { max: 64 },
  placementId: { max: 64 },
  sheetId: { max: 255 },
  sheetName: { max: 255 },
  anchorCell: { max: 64 },
  workbookName: { max: 1024 },
  host: { max: 32, oneOf: ['GOOGLE_SHEETS', 'EXCEL'] },
};
const TARGET_FIELDS = {
  placementId: { max: 64 },
  externalWorkbookId: { max: 1024 },
  sheetName: { max: 255 },
  anchorCell: { max: 64 },
  resultLocation: { max: 1024 },
  sheetId: { max: 255 },
};

// ---------------------------------------------------------------------------------------------
// Authentication: the service's token query and principal, without the periodic write when the
// key was used in the last minute (as AuthService.touch).

async function authenticate(req) {
  const match = /^(Bearer|Api-Key) +([^\s]+) *$/i.exec(req.headers.authorization ?? '');
  if (!match)
    throw new ApiError(401, 'unauthorized', 'Send a token in the Authorization header: "Bearer <token>"');
  const token = match[2];
  const rows = TOKEN_PATTERN.test(token)
    ? (await runSql(pool, TOKEN_SQL, { tokenHash: hashToken(token) })).rows
    : [];
  const row = rows[0];
  if (!row) throw new ApiError(401, 'unauthorized', 'The token is unknown, expired or revoked');
  if (!row.lastUsedAt || Date.now() - row.lastUsedAt.getTime() >= 60_000) {
    runSql(pool, TOUCH_KEY_SQL, { keyId: row.keyId }).catch(() => {});
  }
  const principal = toPrincipal(row);
  // @RequireObjectAction(Action.ReportRead) on every benchmarked route.
  if (!principal.actions.has(Action.ReportRead) && !principal.objectActions.has(Action.ReportRead)) {
    throw new ApiError(403, 'forbidden', 'This operation requires the ReportRead action');
  }
  return principal;
}

/** ReportsService.checkRead for callers who read and manage every report; the bench's admin is one. */
function checkRead(actor) {
  if (actor.actions.has(Action.ReportRead) && actor.actions.has(Action.ReportManage)) {
    return { canEdit: true, canManage: true };
  }
  throw new ApiError(
    501,
    'not_implemented',
    'The baseline serves callers with account-wide report access only',
  );
}

// ---------------------------------------------------------------------------------------------
// Cursors (the codec is cursor.js; only the 400 is ours)

function decodeCursor(after, kinds) {
  const values = parseCursor(after, kinds);
  if (!values) throw badRequest('invalid_cursor', 'after is not a cursor returned by this list');
  return values;
}

// ---------------------------------------------------------------------------------------------
// The five requests

async function getReport(actor, deploymentId, reportId) {
  const access = checkRead(actor);
  const report = await readReport(pool, actor, deploymentId, reportId, access);
  views.record(reportId, actor.userId);
  return report;
}

/** ReportsService.list for sortBy=createdAt DESC (the default) and an account-wide reader. */
async function listReports(actor, deploymentId, query) {
  for (const key of query.keys()) {
    if (key !== 'first' && key !== 'after')
      throw badRequest('validation_failed', [`property ${key} should not exist`]);
  }
  const firstText = query.get('first');
  const first = firstText === null ? 100 : Number(firstText);
  if (!/^\d+$/.test(firstText ?? '100') || first < 1 || first > 1000) {
    throw badRequest('validation_failed', ['first must not be greater than 1000']);
  }
  const afterText = query.get('after');
  if (afterText !== null && afterText.length > 512)
    throw badRequest('validation_failed', ['after is too long']);
  const after = afterText !== null ? decodeCursor(afterText, ['date', 'number']) : null;
  checkRead(actor); // the content scope of such a caller is TRUE

  const params = { accountId: actor.accountId, deploymentId };
  const filter = 'r.deployment_id = :deploymentId AND TRUE';
  const pageParams = { ...params };
  let keyset = 'TRUE';
  if (after) {
    keyset = '(r.created_at, r.id) < (:afterValue::timestamptz, :afterId::int)';
    pageParams.afterValue = after[0];
    pageParams.afterId = after[1];
  }
  const [page, count] = await Promise.all([
    runSql(
      pool,
      reportSelectSql(
        `r.account_id = :accountId AND ${filter} AND ${keyset}`,
        `ORDER BY r.created_at DESC, r.id DESC LIMIT :limit OFFSET :offset`,
      ),
      { ...pageParams, limit: first + 1, offset: 0 },
    ),
    runSql(pool, REPORT_COUNT_SQL, params),
  ]);
  const total = count.rows[0];
  if (!total.deploymentExists) throw notFound(`Deployment ${deploymentId}`);
  const rows = page.rows.slice(0, first);
  const cursorOf = (r) => encodeCursor([r.createdAt.toISOString(), r.id]);
  const access = { canEdit: true, canManage: true };
  const items = rows.map((r) => toReport(r, access));
  return {
    items,
    pageInfo: {
      hasNextPage: page.rows.length > first,
      hasPreviousPage: after !== null,
      startCursor: rows.length ? cursorOf(rows[0]) : null,
      endCursor: rows.length ? cursorOf(rows[rows.length - 1]) : null,
    },
    data: items,
    count: total.n,
    pagination: { total: total.n, offset: 0, limit: first },
  };
}

/** Runs `work` in one transaction on one pooled connection, as DataSource.transaction does. */
async function transaction(work) {
  const client = await pool.connect();
  try {
    await client.query('START TRANSACTION');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => {});
    throw e;
  } finally {
    client.release();
  }
}

async function lockPlacements(m, actor, deploymentId, reportId) {
  const locked = await runSql(m, LOCK_REPORT_SQL, { reportId, deploymentId, accountId: actor.accountId });
  if (!locked.rows[0]) throw notFound(`Report ${reportId}`);
  return (await runSql(m, PLACEMENTS_SQL, { reportId })).rows;
}

async function readReport(m, actor, deploymentId, reportId, access) {
  const { rows } = await runSql(m, READ_REPORT_SQL, { reportId, deploymentId, accountId: actor.accountId });
  if (!rows[0]) throw notFound(`Report ${reportId}`);
  return toReport(rows[0], access);
}

async function connect(actor, deploymentId, reportId, body) {
  const dto = checkBody(body, CONNECT_FIELDS);
  const spot = connectSpot(dto);
  if ('error' in spot) throw badRequest(spot.error, spot.message);
  const access = checkRead(actor);
  return transaction(async (m) => {
    const placements = await lockPlacements(m, actor, deploymentId, reportId);
    const match = connectMatch(placements, dto, spot);
    const values = connectValues(dto, spot, actor.userId);
    const newId = dto.placementId || randomUUID();
    if (match) await runSql(m, UPDATE_PLACEMENT_SQL, { rowId: match.rowId, ...values, newId });
    else
      await runSql(m, INSERT_PLACEMENT_SQL, {
        accountId: actor.accountId,
        reportId,
        placementId: newId,
        ...values,
      });
    return readReport(m, actor, deploymentId, reportId, access);
  });
}

async function disconnect(actor, deploymentId, reportId, body) {
  const target = readTarget(checkBody(body, TARGET_FIELDS));
  const access = checkRead(actor);
  return transaction(async (m) => {
    const placements = await lockPlacements(m, actor, deploymentId, reportId);
    const match = findPlacement(placements, target);
    if (match) await runSql(m, DELETE_PLACEMENT_SQL, { rowId: match.rowId });
    return readReport(m, actor, deploymentId, reportId, access);
  });
}

// ---------------------------------------------------------------------------------------------
// Routing

const ROUTE = /^\/api\/v1\/deployments\/([^/]+)\/reports(?:\/([^/]+)(\/connect-workbook)?)?\/?$/;

async function route(req, url) {
  if (url.pathname === '/health/live' && req.method === 'GET') return { status: 'ok' };
  const m = ROUTE.exec(url.pathname);
  if (!m) throw new ApiError(404, 'not_found', `Cannot ${req.method} ${url.pathname}`);
  const [, dep, report, placement] = m;
  const actor = await authenticate(req);
  const deploymentId = parseId('deploymentId', dep);
  if (report === undefined) {
    if (req.method === 'GET') return listReports(actor, deploymentId, url.searchParams);
  } else {
    const reportId = parseId('reportId', report);
    if (!placement && req.method === 'GET') return getReport(actor, deploymentId, reportId);
    if (placement && req.method === 'PUT') return connect(actor, deploymentId, reportId, await readBody(req));
    if (placement && req.method === 'DELETE') {
      return disconnect(actor, deploymentId, reportId, await readBody(req));
    }
  }
  throw new ApiError(404, 'not_found', `Cannot ${req.method} ${url.pathname}`);
}

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  route(req, url).then(
    (body) => send(res, 200, body),
    (err) => {
      if (err instanceof ApiError) return send(res, err.status, err.body);
      console.error(err);
      send(res, 500, {
        statusCode: 500,
        error: 'Internal Server Error',
        message: 'Internal error',
        code: 'internal_error',
      });
    },
  );
});

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

const port = Number(process.env.PORT ?? 3999);
const host = process.env.HOST ?? '127.0.0.1';
server.listen(port, host, () => console.log(`baseline listening on http://${host}:${port}`));

const stop = () => server.close(() => views.flush().then(() => pool.end().then(() => process.exit(0))));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
