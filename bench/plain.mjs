// The minimal plain server of issue 17: the benchmarked report requests written the way one would
// write a small API on node:http + pg with nothing else, doing the least work that answers them.
// It shares no code with the service (nothing is imported from the build): run.mjs measures the
// service against it to see what the whole stack costs, framework AND the service's own SQL.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench PORT=3998 node bench/plain.mjs
//
// Env: DATABASE_URL, PORT (default 3998), HOST (default 127.0.0.1), DATABASE_POOL_SIZE (default
// 10, the service's default).
//
// Routes (the service's paths and Authorization header; any valid token of the account may call):
//   GET    /api/v1/deployments/:d/reports?first=&after=   (createdAt DESC, id DESC; keyset cursor)
//   GET    /api/v1/deployments/:d/reports/:id
//   PUT    /api/v1/deployments/:d/reports/:id/connect-workbook
//   DELETE /api/v1/deployments/:d/reports/:id/connect-workbook
//   GET    /health/live
//
// Per request: the token's SHA-256 hex looked up in api_keys by its unique index (not revoked,
// not expired, user not deactivated), then
//   get        the report row with its placements (json_agg), 404 when it is not in the deployment;
//   list       a page of `first` reports (keyset `after`, the service's cursor format: base64url
//              JSON [createdAt ISO, id]) with their placements, and count(*) of the deployment's
//              reports for the `count` / `pagination.total` fields (both queries at once);
//   connect    one transaction: lock the report row, update the placement at the same
//              spreadsheet + sheet + anchor or insert one (a single statement), read the report;
//   disconnect delete the placement (by placementId, or spreadsheet + sheet + anchor), read the
//              report.
// Every statement is a named prepared statement (PLAIN_STATEMENTS=unnamed: none is). Not done (the service does): roles and grants,
// view recording, last-used writes of the key, the owner / folder path / roles of a report.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DATABASE_POOL_SIZE ?? 10),
});
// An idle connection closed by the database (a restart, a terminated backend) is dropped by the
// pool; without a listener the 'error' would end the process.
pool.on('error', (e) => console.warn(`idle database connection lost: ${e.message}`));

// ---------------------------------------------------------------------------------------------
// SQL

const TOKEN = {
  name: 'plain_token',
  text: `SELECT u.id AS "userId", u.account_id AS "accountId"
    FROM api_keys k JOIN users u ON u.id = k.user_id
    WHERE k.token_hash = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
      AND NOT u.is_deactivated`,
};

const REPORT_COLUMNS = `r.id, r.public_id AS "publicId", r.deployment_id AS "deploymentId",
  r.folder_id AS "folderId", r.workbook_id AS "workbookId", r.name, r.title, r.description,
  r.json_query AS "jsonQuery", r.sql_query AS "sqlQuery", r.meta, r.pivot_items AS "pivotItems", r.source,
  r.version, r.user_id AS "userId", r.created_by AS "createdBy", r.refreshed_by AS "refreshedBy",
  r.created_at AS "createdAt", r.updated_at AS "updatedAt", COALESCE(p.placements, '[]') AS placements
FROM reports r
LEFT JOIN LATERAL (
  SELECT json_agg(json_build_object('id', placement_id, 'workbookId', external_workbook_id,
    'resultLocation', result_location, 'sheetId', sheet_id, 'sheetName', sheet_name, 'anchorCell', anchor_cell,
    'endResultCell', end_result_cell, 'host', host, 'workbookName', workbook_name, 'placedAt', placed_at,
    'placedByUserId', placed_by_user_id, 'refreshedAt', refreshed_at, 'refreshedByUserId', refreshed_by_user_id)
    ORDER BY row_id) AS placements
  FROM report_placements WHERE report_id = r.id
) p ON true`;

const READ_REPORT = {
  name: 'plain_read_report',
  text: `SELECT ${REPORT_COLUMNS} WHERE r.id = $1 AND r.deployment_id = $2 AND r.account_id = $3`,
};
const FIRST_PAGE = {
  name: 'plain_first_page',
  text: `SELECT ${REPORT_COLUMNS} WHERE r.deployment_id = $1 AND r.account_id = $2
    ORDER BY r.created_at DESC, r.id DESC LIMIT $3`,
};
const NEXT_PAGE = {
  name: 'plain_next_page',
  text: `SELECT ${REPORT_COLUMNS} WHERE r.deployment_id = $1 AND r.account_id = $2
      AND (r.created_at, r.id) < ($4::timestamptz, $5::int)
    ORDER BY r.created_at DESC, r.id DESC LIMIT $3`,
};
const COUNT = {
  name: 'plain_count',
  // By deployment alone (an index-only scan of ix_reports_deployment_id); the deployment's own
  // account is checked once, not on every row (no index has both columns).
  text: `SELECT count(*)::int AS n FROM reports
    WHERE deployment_id = $1 AND EXISTS (SELECT 1 FROM deployments WHERE id = $1 AND account_id = $2)`,
};
const LOCK_REPORT = {
  name: 'plain_lock_report',
  text: `SELECT 1 FROM reports WHERE id = $1 AND deployment_id = $2 AND account_id = $3 FOR NO KEY UPDATE`,
};
/** $1 account, $2 report, $3 spreadsheet, $4 location, $5 sheet id, $6 sheet, $7 anchor, $8 end, $9 host, $10 workbook name, $11 user. */
const UPSERT_PLACEMENT = {
  name: 'plain_upsert_placement',
  text: `WITH updated AS (
      UPDATE report_placements SET result_location = $4::text, sheet_id = COALESCE($5::text, sheet_id),
        end_result_cell = $8::text, host = COALESCE($9::text, host), workbook_name = COALESCE($10::text, workbook_name),
        placed_at = now(), placed_by_user_id = $11::int, placement_id = COALESCE(placement_id, gen_random_uuid()::text)
      WHERE report_id = $2::int AND external_workbook_id = $3::text AND sheet_name = $6::text AND anchor_cell = $7::text
      RETURNING row_id
    )
    INSERT INTO report_placements (account_id, report_id, placement_id, external_workbook_id, result_location,
      sheet_id, sheet_name, anchor_cell, end_result_cell, host, workbook_name, placed_at, placed_by_user_id)
    SELECT $1::int, $2::int, gen_random_uuid()::text, $3::text, $4::text, $5::text, $6::text, $7::text, $8::text,
      $9::text, $10::text, now(), $11::int
    WHERE NOT EXISTS (SELECT 1 FROM updated)`,
};
const DELETE_BY_ID = {
  name: 'plain_delete_by_id',
  text: `DELETE FROM report_placements p USING reports r
    WHERE r.id = $1 AND r.deployment_id = $2 AND r.account_id = $3 AND p.report_id = r.id AND p.placement_id = $4`,
};
const DELETE_BY_SPOT = {
  name: 'plain_delete_by_spot',
  text: `DELETE FROM report_placements p USING reports r
    WHERE r.id = $1 AND r.deployment_id = $2 AND r.account_id = $3 AND p.report_id = r.id
      AND p.external_workbook_id = $4 AND p.sheet_name = $5 AND p.anchor_cell = $6`,
};

// PLAIN_STATEMENTS=unnamed sends every statement unnamed (parsed and planned on each call), as a
// plain server written with pool.query(text, values) does; the default prepares them.
const UNNAMED = process.env.PLAIN_STATEMENTS === 'unnamed';
const query = (db, statement, values) =>
  UNNAMED ? db.query(statement.text, values) : db.query({ ...statement, values });

// ---------------------------------------------------------------------------------------------
// Helpers

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

const ID = /^[1-9]\d{0,9}$/;
function parseId(text) {
  if (!ID.test(text) || Number(text) > 2_147_483_647) throw new HttpError(400, 'Invalid id');
  return Number(text);
}

async function authenticate(req) {
  const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
  if (!m) throw new HttpError(401, 'Missing bearer token');
  const hash = createHash('sha256').update(m[1]).digest('hex');
  const { rows } = await query(pool, TOKEN, [hash]);
  if (!rows[0]) throw new HttpError(401, 'Invalid token');
  return rows[0];
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size > 1024 * 1024) reject(new HttpError(413, 'Body too large'));
      else chunks.push(c);
    });
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (body === null || typeof body !== 'object' || Array.isArray(body))
          throw new Error('not an object');
        resolve(body);
      } catch {
        reject(new HttpError(400, 'The body must be a JSON object'));
      }
    });
    req.on('error', reject);
  });
}

const optionalString = (body, key, max) => {
  const v = body[key];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'string' || v.length > max) throw new HttpError(400, `${key} must be a string`);
  return v;
};

/** `B3`, `$b$3` → `B3`. */
const normalizeCell = (text) => {
  const m = /^\$?([A-Za-z]{1,3})\$?([1-9]\d{0,6})$/.exec(text.trim());
  return m ? `${m[1].toUpperCase()}${m[2]}` : null;
};
/** `Sheet!A1`, `'Sheet name'!A1:D20` → sheet, anchor and end cell; null when it is not that. */
function parseLocation(text) {
  const m = /^(?:'((?:[^']|'')+)'|([^'!]+))!([^:]+)(?::(.+))?$/.exec(text.trim());
  if (!m) return null;
  const anchor = normalizeCell(m[3]);
  const end = m[4] === undefined ? null : normalizeCell(m[4]);
  if (!anchor || (m[4] !== undefined && !end)) return null;
  return { sheet: m[1] !== undefined ? m[1].replaceAll("''", "'") : m[2], anchor, end };
}

// ---------------------------------------------------------------------------------------------
// Handlers

async function readReport(db, user, deploymentId, reportId) {
  const { rows } = await query(db, READ_REPORT, [reportId, deploymentId, user.accountId]);
  if (!rows[0]) throw new HttpError(404, `Report ${reportId} was not found`);
  return rows[0];
}

const cursorOf = (r) => Buffer.from(JSON.stringify([r.createdAt.toISOString(), r.id])).toString('base64url');

async function listReports(user, deploymentId, params) {
  const first = params.has('first') ? Number(params.get('first')) : 100;
  if (!Number.isInteger(first) || first < 1 || first > 1000)
    throw new HttpError(400, 'first must be 1 to 1000');
  let after = null;
  if (params.has('after')) {
    try {
      after = JSON.parse(Buffer.from(params.get('after'), 'base64url').toString('utf8'));
    } catch {
      /* checked below */
    }
    if (
      !Array.isArray(after) ||
      after.length !== 2 ||
      typeof after[0] !== 'string' ||
      Number.isNaN(Date.parse(after[0])) ||
      !Number.isSafeInteger(after[1])
    ) {
      throw new HttpError(400, 'Invalid cursor');
    }
  }
  const [page, count] = await Promise.all([
    after
      ? query(pool, NEXT_PAGE, [deploymentId, user.accountId, first + 1, after[0], after[1]])
      : query(pool, FIRST_PAGE, [deploymentId, user.accountId, first + 1]),
    query(pool, COUNT, [deploymentId, user.accountId]),
  ]);
  const items = page.rows.slice(0, first);
  const total = count.rows[0].n;
  return {
    items,
    pageInfo: {
      hasNextPage: page.rows.length > first,
      hasPreviousPage: after !== null,
      startCursor: items.length ? cursorOf(items[0]) : null,
      endCursor: items.length ? cursorOf(items[items.length - 1]) : null,
    },
    data: items,
    count: total,
    pagination: { total, offset: 0, limit: first },
  };
}

async function transaction(work) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
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

async function connect(user, deploymentId, reportId, body) {
  const workbook = optionalString(body, 'externalWorkbookId', 1024);
  const location = optionalString(body, 'resultLocation', 1024);
  if (!workbook || !location) throw new HttpError(400, 'externalWorkbookId and resultLocation are required');
  const loc = parseLocation(location);
  if (!loc) throw new HttpError(400, 'resultLocation must be A1 notation with a sheet');
  const sheet = optionalString(body, 'sheetName', 255) ?? loc.sheet;
  const anchorText = optionalString(body, 'anchorCell', 64);
  const anchor = anchorText === null ? loc.anchor : normalizeCell(anchorText);
  if (sheet !== loc.sheet || anchor !== loc.anchor) {
    throw new HttpError(400, 'sheetName / anchorCell disagree with resultLocation');
  }
  const endText = optionalString(body, 'endResultCell', 64);
  const end = endText === null ? loc.end : normalizeCell(endText);
  const host = optionalString(body, 'host', 32);
  if (host !== null && host !== 'GOOGLE_SHEETS' && host !== 'EXCEL') throw new HttpError(400, 'Unknown host');
  const values = [
    user.accountId,
    reportId,
    workbook,
    location.trim(),
    optionalString(body, 'sheetId', 255),
    sheet,
    anchor,
    end,
    host,
    optionalString(body, 'workbookName', 1024),
    user.userId,
  ];
  return transaction(async (client) => {
    const locked = await query(client, LOCK_REPORT, [reportId, deploymentId, user.accountId]);
    if (!locked.rows[0]) throw new HttpError(404, `Report ${reportId} was not found`);
    await query(client, UPSERT_PLACEMENT, values);
    return readReport(client, user, deploymentId, reportId);
  });
}

async function disconnect(user, deploymentId, reportId, body) {
  const placementId = optionalString(body, 'placementId', 64);
  const key = [reportId, deploymentId, user.accountId];
  if (placementId) {
    await query(pool, DELETE_BY_ID, [...key, placementId]);
  } else {
    const workbook = optionalString(body, 'externalWorkbookId', 1024);
    const sheet = optionalString(body, 'sheetName', 255);
    const anchor = normalizeCell(optionalString(body, 'anchorCell', 64) ?? '');
    if (!workbook || !sheet || !anchor) {
      throw new HttpError(400, 'Send placementId, or externalWorkbookId, sheetName and anchorCell');
    }
    await query(pool, DELETE_BY_SPOT, [...key, workbook, sheet, anchor]);
  }
  return readReport(pool, user, deploymentId, reportId);
}

// ---------------------------------------------------------------------------------------------
// Routing

const ROUTE = /^\/api\/v1\/deployments\/([^/]+)\/reports(?:\/([^/]+)(\/connect-workbook)?)?\/?$/;

async function handle(req) {
  const url = new URL(req.url, 'http://localhost');
  if (url.pathname === '/health/live') return { status: 'ok' };
  const m = ROUTE.exec(url.pathname);
  if (!m) throw new HttpError(404, 'Not found');
  const user = await authenticate(req);
  const deploymentId = parseId(m[1]);
  if (m[2] === undefined) {
    if (req.method === 'GET') return listReports(user, deploymentId, url.searchParams);
  } else {
    const reportId = parseId(m[2]);
    if (!m[3] && req.method === 'GET') return readReport(pool, user, deploymentId, reportId);
    if (m[3] && req.method === 'PUT') return connect(user, deploymentId, reportId, await readJson(req));
    if (m[3] && req.method === 'DELETE') return disconnect(user, deploymentId, reportId, await readJson(req));
  }
  throw new HttpError(404, 'Not found');
}

function send(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

const server = http.createServer((req, res) => {
  handle(req).then(
    (body) => send(res, 200, body),
    (err) => {
      if (err instanceof HttpError)
        return send(res, err.status, { statusCode: err.status, message: err.message });
      console.error(err);
      send(res, 500, { statusCode: 500, message: 'Internal error' });
    },
  );
});

const port = Number(process.env.PORT ?? 3998);
const host = process.env.HOST ?? '127.0.0.1';
server.listen(port, host, () => console.log(`plain server listening on http://${host}:${port}`));

const stop = () => server.close(() => pool.end().then(() => process.exit(0)));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
