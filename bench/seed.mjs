// Seeds the benchmark database with a realistic reports workload and writes bench/.state.json.
//
//   node bench/seed.mjs [--reports 100000] [--folders 1000]
//
// Env: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/bench; the database is
// DROPPED and recreated), BENCH_DIST (the built service, default dist), BENCH_STATE_FILE (where the
// state goes, default bench/.state.json; a bench seeding a database of its own, compile-load.mjs,
// writes elsewhere so the shared state of run.mjs stays).
//
// Steps: recreate the database; migrate it and bootstrap the admin through the service's CLI;
// then, in set-based SQL (generate_series, INSERT ... SELECT, seeded random()): 24 more users,
// 5 custom roles with a few grants (so `rolesWithAccess` has work to do), one deployment,
// 1,000 folders (50 roots, 250 at depth 2, 700 at depth 3; `ancestor_ids` root first, without
// the folder itself), 500 workbooks, 100,000 reports (5% at the root, 10% in workbooks, the rest
// in folders; names, titles, descriptions, json_query ~600 B, sql_query ~450 B on half, meta
// jsonb, pivot items on 30%), 0 to 5 placements per report (~1.6 on average; placement_id NULL on
// ~10% legacy rows, some of which hold their sheet and anchor only in result_location; sheet_id
// NULL on ~20%), 30,000 report views; then VACUUM ANALYZE.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { cli as runCli, recreateDatabase, root, stepper } from './service.mjs';

const here = path.join(root, 'bench');
const { values: args } = parseArgs({
  options: { reports: { type: 'string', default: '100000' }, folders: { type: 'string', default: '1000' } },
});
const REPORTS = Number(args.reports);
const FOLDERS = Number(args.folders);
const DIST = path.resolve(root, process.env.BENCH_DIST ?? 'dist');
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/bench';
const STATE_FILE = path.resolve(root, process.env.BENCH_STATE_FILE ?? path.join(here, '.state.json'));

const step = stepper();

/** Runs the service's CLI and returns its last stdout line (JSON). */
const cli = (...argv) => runCli(DIST, DATABASE_URL, ...argv);

step(`recreating ${DATABASE_URL.replace(/\/\/[^@]*@/, '//')}`);
await recreateDatabase(DATABASE_URL);
step('migrating (cli migrate)');
cli('migrate');
step('bootstrapping the admin (cli bootstrap)');
const admin = cli('bootstrap', '--account', 'bench', '--email', 'admin@bench.test');

const db = new pg.Client({ connectionString: DATABASE_URL });
await db.connect();
const q = (sql, params = []) => db.query(sql, params);
const accountId = admin.accountId;
await q(`SELECT setseed(0.4242)`);

step('users, roles and the deployment');
await q(
  `INSERT INTO users (account_id, email, username, first_name, picture, default_roles)
   SELECT $1, 'analyst' || g || '@bench.test', 'analyst' || g,
     (ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald','Frances','Ken'])[1 + g % 8],
     CASE WHEN g % 3 = 0 THEN 'https://avatars.example.com/u/' || g || '.png' END,
     CASE WHEN g % 4 = 0 THEN '{Developer}'::text[] ELSE '{Explorer}'::text[] END
   FROM generate_series(1, 24) g`,
  [accountId],
);
await q(
  `INSERT INTO roles (account_id, name)
   SELECT $1, n FROM unnest(ARRAY['Finance','Sales ops','Marketing','Executives','Contractors']) n`,
  [accountId],
);
const {
  rows: [dep],
} = await q(
  `INSERT INTO deployments (account_id, name, cloud_provider, region, creation_method, deploy_mode,
     creation_step, is_managed, target_platform)
   VALUES ($1, 'Sales analytics', 'aws', 'aws-us-east-1', 'github', 'git', 'ready', true, 'cubecloud')
   RETURNING id`,
  [accountId],
);
const deploymentId = dep.id;

step(`${FOLDERS} folders`);
// 5% roots, 25% at depth 2, the rest at depth 3; each child picks a parent of the level above.
const roots = Math.round(FOLDERS * 0.05);
const level2 = Math.round(FOLDERS * 0.25);
const level3 = FOLDERS - roots - level2;
const folderName = `(ARRAY['Finance','Sales','Marketing','Operations','Product','Support','People','Board',
  'Forecasts','Archive','Regional','Weekly','Monthly','Quarterly','Ad hoc','Customers'])[1 + (g * 7) % 16]
  || ' ' || g`;
await q(
  `INSERT INTO folders (account_id, deployment_id, parent_id, ancestor_ids, name, position, user_id, created_by,
     created_at, updated_at)
   SELECT $1, $2, NULL, '{}', ${folderName}, g, u.id, u.id, now() - interval '3 years', now() - interval '3 years'
   FROM generate_series(1, $3) g
   JOIN LATERAL (SELECT id FROM users WHERE account_id = $1 ORDER BY id OFFSET g % 25 LIMIT 1) u ON true`,
  [accountId, deploymentId, roots],
);
for (const [depth, count] of [
  [2, level2],
  [3, level3],
]) {
  await q(
    `WITH parents AS (
       SELECT id, ancestor_ids, user_id, row_number() OVER (ORDER BY id) - 1 AS i, count(*) OVER () AS n
       FROM folders WHERE deployment_id = $2 AND cardinality(ancestor_ids) = $4 - 2)
     INSERT INTO folders (account_id, deployment_id, parent_id, ancestor_ids, name, position, user_id, created_by,
       created_at, updated_at)
     SELECT $1, $2, p.id, p.ancestor_ids || p.id, ${folderName}, g, p.user_id, p.user_id,
       now() - interval '2 years', now() - interval '1 year'
     FROM generate_series(1, $3) g JOIN parents p ON p.i = (g - 1) % p.n`,
    [accountId, deploymentId, count, depth],
  );
}

step('500 workbooks');
await q(
  `WITH fo AS (SELECT array_agg(id ORDER BY id) AS ids FROM folders WHERE deployment_id = $2),
        us AS (SELECT array_agg(id ORDER BY id) AS ids FROM users WHERE account_id = $1)
   INSERT INTO workbooks (account_id, deployment_id, folder_id, name, slug, meta, user_id, created_by, created_at)
   SELECT $1, $2, CASE WHEN g % 10 = 0 THEN NULL ELSE fo.ids[1 + (g * 37) % cardinality(fo.ids)] END,
     'Workbook ' || g, CASE WHEN g % 2 = 0 THEN 'workbook-' || g END,
     jsonb_build_object('theme', 'light', 'tabs', jsonb_build_array('Overview', 'Detail')),
     us.ids[1 + g % cardinality(us.ids)], us.ids[1 + g % cardinality(us.ids)], now() - (g || ' days')::interval
   FROM generate_series(1, 500) g, fo, us`,
  [accountId, deploymentId],
);

step(`${REPORTS} reports`);
await q(
  `WITH fo AS (SELECT array_agg(id ORDER BY id) AS ids FROM folders WHERE deployment_id = $2),
        wb AS (SELECT array_agg(id ORDER BY id) AS ids FROM workbooks WHERE deployment_id = $2),
        us AS (SELECT array_agg(id ORDER BY id) AS ids FROM users WHERE account_id = $1),
        s AS (
          SELECT g, random() AS r1, random() AS r2, random() AS r3, random() AS r4, random() AS r5, random() AS r6,
            (ARRAY['Orders','Invoices','Subscriptions','Sessions','Tickets','Deals','Shipments','Payments'])
              [1 + floor(random() * 8)::int] AS cube,
            (ARRAY['Revenue','Orders','Churn','Pipeline','Active users','Refunds','Margin','Bookings','Tickets',
              'Conversion'])[1 + floor(random() * 10)::int] AS metric,
            (ARRAY['region','month','product','channel','segment','account manager','country','plan'])
              [1 + floor(random() * 8)::int] AS dim,
            (ARRAY['day','week','month','quarter'])[1 + floor(random() * 4)::int] AS grain,
            (ARRAY['US','DE','FR','GB','JP','BR','IN','CA'])[1 + floor(random() * 8)::int] AS country,
            -- ~3 years of history, oldest first, so ids roughly follow creation time
            now() - ((($3 - g) * 946 + random() * 600) || ' seconds')::interval AS created
          FROM generate_series(1, $3) g)
   INSERT INTO reports (account_id, deployment_id, public_id, folder_id, workbook_id, name, title, description,
     json_query, sql_query, meta, pivot_items, source, version, user_id, created_by, refreshed_by,
     created_at, updated_at)
   SELECT $1, $2,
     CASE WHEN s.r1 < 0.6 THEN 'P' || lpad(s.g::text, 6, '0') || substr(md5(s.g::text), 1, 5) END,
     CASE WHEN s.r2 < 0.05 OR s.r2 >= 0.90 THEN NULL ELSE fo.ids[1 + floor(s.r3 * cardinality(fo.ids))::int] END,
     CASE WHEN s.r2 >= 0.90 THEN wb.ids[1 + floor(s.r3 * cardinality(wb.ids))::int] END,
     s.metric || ' by ' || s.dim || CASE WHEN s.g % 3 = 0 THEN ' (' || s.grain || 'ly)' ELSE '' END,
     CASE WHEN s.r4 < 0.7 THEN s.metric || ' by ' || s.dim || ', last 12 months' END,
     CASE WHEN s.r4 < 0.4 THEN format('%s by %s and status for the %s team. Refreshed every morning; figures '
       'exclude test accounts and refunds issued after month end. Questions: #analytics-%s.',
       s.metric, s.dim, s.cube, lower(s.cube)) END,
     format('{"measures":["%1$s.count","%1$s.totalAmount","%1$s.averageValue"],"dimensions":["%1$s.status",'
       '"Customers.%2$s","Products.category"],"timeDimensions":[{"dimension":"%1$s.createdAt","granularity":"%3$s",'
       '"dateRange":"Last 12 months"}],"filters":[{"member":"Customers.country","operator":"equals","values":'
       '["%4$s","US"]},{"member":"%1$s.amount","operator":"gt","values":["%5$s"]},{"member":"%1$s.isTest",'
       '"operator":"equals","values":["false"]}],"order":{"%1$s.count":"desc","%1$s.createdAt":"asc"},'
       '"segments":["%1$s.completed"],"limit":%6$s,"timezone":"UTC","ungrouped":false,"total":true}',
       s.cube, replace(s.dim, ' ', '_'), s.grain, s.country, floor(s.r5 * 1000), 1000 + (s.g % 10) * 1000),
     CASE WHEN s.r5 < 0.5 THEN format('SELECT date_trunc(''%3$s'', "%1$s".created_at) AS period, "%1$s".status, '
       'count(*) AS count, sum("%1$s".amount) AS total FROM public.%2$s AS "%1$s" LEFT JOIN public.customers AS '
       '"customers" ON "%1$s".customer_id = "customers".id WHERE "customers".country IN (''%4$s'', ''US'') AND '
       '"%1$s".created_at >= now() - interval ''12 months'' AND NOT "%1$s".is_test GROUP BY 1, 2 ORDER BY 3 DESC '
       'LIMIT 5000', lower(s.cube), lower(s.cube), s.grain, s.country) END,
     jsonb_build_object('chartType', (ARRAY['table','bar','line','pie'])[1 + s.g % 4],
       'columnWidths', jsonb_build_object('A', 140, 'B', 96, 'C', 96, 'D', 120),
       'numberFormat', '#,##0.00', 'headerStyle', jsonb_build_object('bold', true, 'background', '#F3F4F6'),
       'frozenRows', 1, 'lastRunMs', floor(s.r6 * 5000), 'rowCount', floor(s.r5 * 20000),
       'conditionalFormatting', jsonb_build_array(jsonb_build_object('range', 'C2:C500', 'rule', 'lessThan',
         'value', 0, 'color', '#B91C1C'))),
     CASE WHEN s.r6 < 0.3 THEN jsonb_build_object('columns', jsonb_build_array('Products.category'),
       'measures', jsonb_build_array(s.cube || '.count', s.cube || '.totalAmount'),
       'rows', jsonb_build_array(s.cube || '.status', 'Customers.region'), 'filters', '[]'::jsonb,
       'measuresAxis', 'columns', 'measuresPosition', 'after') END,
     (ARRAY['GOOGLE_SHEETS','GOOGLE_SHEETS','EXCEL','PLAYGROUND'])[1 + s.g % 4],
     1 + floor(s.r6 * 20)::int,
     us.ids[1 + floor(s.r3 * cardinality(us.ids))::int], us.ids[1 + floor(s.r3 * cardinality(us.ids))::int],
     CASE WHEN s.r4 < 0.5 THEN us.ids[1 + floor(s.r1 * cardinality(us.ids))::int] END,
     s.created, s.created + (now() - s.created) * s.r6 * s.r6
   FROM s, fo, wb, us`,
  [accountId, deploymentId, REPORTS],
);

step('report placements (0 to 5 per report)');
await q(
  `WITH us AS (SELECT array_agg(id ORDER BY id) AS ids FROM users WHERE account_id = $1),
   p AS (
     SELECT r.id AS report_id, r.created_at, k, random() AS a, random() AS b, random() AS c, random() AS d,
       random() AS e, random() AS f, floor(random() * 30000)::int AS book
     FROM (SELECT id, created_at, random() AS rn FROM reports WHERE deployment_id = $2) r
     CROSS JOIN LATERAL generate_series(1, CASE WHEN rn < 0.30 THEN 0 WHEN rn < 0.60 THEN 1 WHEN rn < 0.75 THEN 2
       WHEN rn < 0.85 THEN 3 WHEN rn < 0.93 THEN 4 ELSE 5 END) k),
   q AS (
     SELECT p.*, p.a < 0.10 AS legacy,
       (ARRAY['Sheet1','Summary','Data','Q3 2026','Revenue','Pipeline','Board deck','KPIs'])[1 + floor(p.b * 8)::int]
         AS sheet,
       chr(64 + p.k) || (1 + floor(p.c * 40)::int) AS anchor,
       chr(67 + p.k + floor(p.d * 5)::int) || (41 + floor(p.e * 500)::int) AS end_cell,
       CASE WHEN p.book % 3 = 0 THEN 'EXCEL' ELSE 'GOOGLE_SHEETS' END AS host
     FROM p)
   INSERT INTO report_placements (account_id, report_id, placement_id, external_workbook_id, result_location,
     sheet_id, sheet_name, anchor_cell, end_result_cell, host, workbook_name, placed_at, placed_by_user_id,
     refreshed_at, refreshed_by_user_id)
   SELECT $1, q.report_id,
     CASE WHEN q.legacy THEN NULL ELSE gen_random_uuid()::text END,
     CASE WHEN q.host = 'EXCEL' THEN '01' || upper(substr(md5('xl' || q.book), 1, 30))
          ELSE '1' || substr(md5('gs' || q.book), 1, 32) || substr(md5('id' || q.book), 1, 11) END,
     CASE WHEN q.sheet ~ ' ' THEN '''' || q.sheet || '''' ELSE q.sheet END || '!' || q.anchor || ':' || q.end_cell,
     CASE WHEN q.f >= 0.20 THEN (floor(q.f * 2000000000)::bigint)::text END,
     CASE WHEN q.legacy AND q.d < 0.5 THEN NULL ELSE q.sheet END,
     CASE WHEN q.legacy AND q.d < 0.5 THEN NULL ELSE q.anchor END,
     CASE WHEN q.legacy AND q.d < 0.5 THEN NULL ELSE q.end_cell END,
     CASE WHEN q.legacy THEN NULL ELSE q.host END,
     (ARRAY['Finance model','Sales pipeline','Board pack','Weekly KPIs','Marketing spend','Churn analysis'])
       [1 + q.book % 6] || ' ' || q.book,
     q.created_at + (now() - q.created_at) * q.c, us.ids[1 + floor(q.e * cardinality(us.ids))::int],
     CASE WHEN q.e < 0.6 THEN q.created_at + (now() - q.created_at) * (q.c + (1 - q.c) * q.b) END,
     CASE WHEN q.e < 0.6 THEN us.ids[1 + floor(q.b * cardinality(us.ids))::int] END
   FROM q, us`,
  [accountId, deploymentId],
);

step('grants and report views');
await q(
  `WITH ro AS (SELECT array_agg(id ORDER BY id) AS ids FROM roles WHERE account_id = $1)
   INSERT INTO policies (account_id, principal_type, principal_id, resource_type, resource_id, action)
   SELECT DISTINCT ON (ro.ids[1 + g % 5], t, rid) $1, 'role', ro.ids[1 + g % 5], t, rid, act
   FROM ro, generate_series(1, 3000) g,
     LATERAL (SELECT CASE WHEN g <= 2 THEN 'Global' WHEN g <= 200 THEN 'Folder' WHEN g <= 400 THEN 'Workbook'
                          ELSE 'Report' END AS t) t1,
     LATERAL (SELECT CASE t WHEN 'Global' THEN 'global'
                            WHEN 'Folder' THEN (SELECT min(id) + (g * 13) % 1000 FROM folders WHERE deployment_id = $2)::text
                            WHEN 'Workbook' THEN (SELECT min(id) + (g * 7) % 500 FROM workbooks WHERE deployment_id = $2)::text
                            ELSE (SELECT min(id) + (g * 31) % $3 FROM reports WHERE deployment_id = $2)::text END AS rid,
                     (ARRAY['ReportRead','ReportEdit','FolderRead','WorkbookRead'])[1 + g % 4] AS act) t2
   ON CONFLICT DO NOTHING`,
  [accountId, deploymentId, REPORTS],
);
await q(
  `INSERT INTO user_roles (user_id, role_id, account_id)
   SELECT u.id, r.id, $1 FROM users u JOIN roles r ON r.account_id = u.account_id
   WHERE u.account_id = $1 AND (u.id + r.id) % 3 = 0 AND NOT 'Admin' = ANY(u.default_roles)`,
  [accountId],
);
await q(
  `INSERT INTO report_views (report_id, user_id, last_viewed_at)
   SELECT r.id, u.id, now() - (random() * 90 || ' days')::interval
   FROM (SELECT min(id) AS lo FROM reports WHERE deployment_id = $2) b,
     LATERAL (SELECT b.lo + floor(random() * $3)::int AS id, g FROM generate_series(1, 30000) g) r,
     LATERAL (SELECT id FROM users WHERE account_id = $1 ORDER BY id OFFSET r.g % 25 LIMIT 1) u
   ON CONFLICT DO NOTHING`,
  [accountId, deploymentId, REPORTS],
);

// VACUUM sets the visibility map, as autovacuum would soon after a bulk load: without it every
// index-only scan (the lists' count) visits the heap, and figures depend on when autovacuum ran.
step('VACUUM ANALYZE');
await q('VACUUM (ANALYZE)');

const {
  rows: [stats],
} = await q(
  `SELECT (SELECT min(id) FROM reports WHERE deployment_id = $1) AS "minReportId",
          (SELECT max(id) FROM reports WHERE deployment_id = $1) AS "maxReportId",
          (SELECT count(*)::int FROM reports WHERE deployment_id = $1) AS reports,
          (SELECT count(*)::int FROM folders WHERE deployment_id = $1) AS folders,
          (SELECT max(cardinality(ancestor_ids)) + 1 FROM folders WHERE deployment_id = $1) AS "maxFolderDepth",
          (SELECT count(*)::int FROM workbooks WHERE deployment_id = $1) AS workbooks,
          (SELECT count(*)::int FROM report_placements) AS placements,
          (SELECT count(*)::int FROM report_placements WHERE placement_id IS NULL) AS "legacyPlacements",
          (SELECT count(*)::int FROM report_views) AS views,
          (SELECT count(*)::int FROM policies) AS policies,
          pg_size_pretty(pg_total_relation_size('reports')) AS "reportsSize",
          pg_size_pretty(pg_total_relation_size('report_placements')) AS "placementsSize"`,
  [deploymentId],
);
await db.end();

const state = {
  databaseUrl: DATABASE_URL,
  token: admin.token,
  accountId,
  userId: admin.userId,
  deploymentId,
  minReportId: stats.minReportId,
  maxReportId: stats.maxReportId,
  // A report of the seeded range for a quick manual connect/disconnect (run.mjs picks its own sets).
  connectReportId: stats.minReportId + 12345,
  seededAt: new Date().toISOString(),
  stats,
};
fs.writeFileSync(STATE_FILE, `${JSON.stringify(state, null, 2)}\n`);
step(`done; wrote ${path.relative(root, STATE_FILE)}`);
console.log(JSON.stringify(stats));
